#include "lowcomm/compress/unit_scratch.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

namespace lowcomm {

void UnitScratch::missing(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  const std::string name = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  throw Error(fmt::format("compressor scratch holds no {}: decode or transmitted was called without "
                          "the same unit's encode of this step",
                          name));
}

}  // namespace lowcomm
