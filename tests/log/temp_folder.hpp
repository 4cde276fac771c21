#pragma once
// A fresh folder per test, removed afterwards, so tests neither collide nor leave files behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace lowcomm::test {

class TempFolder {
 public:
  TempFolder() {
    const testing::TestInfo* test = testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("lowcomm_log_" + std::to_string(getpid()) + "_" + test->test_suite_name() + "_" +
             test->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace lowcomm::test
