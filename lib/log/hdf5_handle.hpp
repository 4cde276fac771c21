#pragma once
// RAII for HDF5 identifiers, and the translation of HDF5 failures into LogError. Internal to the
// log layer: nothing HDF5 appears in lowcomm's public headers.
#include <hdf5.h>

#include <concepts>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

namespace lowcomm::log_detail {

// Owns one HDF5 identifier and closes it with the H5?close function it was opened for.
class Hdf5Id {
 public:
  using Closer = herr_t (*)(hid_t);

  Hdf5Id() = default;
  Hdf5Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Hdf5Id(Hdf5Id&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Hdf5Id& operator=(Hdf5Id&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Hdf5Id(const Hdf5Id&) = delete;
  Hdf5Id& operator=(const Hdf5Id&) = delete;
  ~Hdf5Id() { reset(); }

  hid_t get() const { return id_; }

  // Closes now and returns the closer's status: a file's last writes happen in its close, so
  // close() must be able to see that failure where the destructor cannot.
  herr_t close() { return id_ < 0 ? 0 : closer_(std::exchange(id_, H5I_INVALID_HID)); }

 private:
  void reset() noexcept { close(); }

  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// HDF5 prints its error stack to stderr by default; the log reports failures as LogError instead,
// so each public entry point silences the printing while it runs and restores the caller's
// setting afterwards (other code in the process may rely on it).
class SilenceHdf5Errors {
 public:
  SilenceHdf5Errors() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  SilenceHdf5Errors(const SilenceHdf5Errors&) = delete;
  SilenceHdf5Errors& operator=(const SilenceHdf5Errors&) = delete;
  ~SilenceHdf5Errors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

// How messages name the file an HDF5 failure concerns: "<kind> <path>". Implicit from a path,
// which reads "run log <path>", so the log's calls pass their path; other files written with
// these helpers (the replay output) name their own kind.
struct ReportedFile {
  ReportedFile(const std::filesystem::path& path, std::string_view kind = "run log")
      : path(path), kind(kind) {}
  const std::filesystem::path& path;
  std::string_view kind;
};

// The innermost message on this thread's HDF5 error stack (the cause, e.g. "file is already open
// for write"), or "" when the stack is empty.
std::string hdf5_error_cause();

// Throws LogError "<file.kind> <file.path>: <what> (HDF5: <cause>). <advice>"; what and advice
// should say what failed and what the user can do about it.
[[noreturn]] void throw_log_error(const ReportedFile& file, std::string_view what,
                                  std::string_view advice = {});

// HDF5 calls return a negative id or status on failure.
template <std::signed_integral Status>
Status check(Status status, const ReportedFile& file, std::string_view what,
             std::string_view advice = {}) {
  if (status < 0) throw_log_error(file, what, advice);
  return status;
}

}  // namespace lowcomm::log_detail
