#pragma once
// lowcomm reports misuse and bad input with exceptions whose message says what to change.
// Each layer has its own type so that callers (the CLI, tests) can tell them apart.
#include <stdexcept>

namespace lowcomm {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A configuration value or file is invalid; the message names the key and what is allowed.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A collective was called with arguments that cannot work (mismatched sizes, bad root...).
class CommError : public Error {
 public:
  using Error::Error;
};

// The HDF5 run log could not be created, opened, appended to or written.
class LogError : public Error {
 public:
  using Error::Error;
};

}  // namespace lowcomm
