#pragma once
// The holder of what a compressor's encode leaves for the decode rounds and `transmitted` of the
// same unit in the same step. The library keeps one UnitScratch per unit and hands it to every
// call of that unit; it outlives the step, so encode can reuse last step's buffers. A compressor
// derived from CompressorWith<Scratch> (compressor.hpp) never sees this type: it receives its own
// Scratch, typed. Only a compressor that wraps another (error feedback) uses it directly:
//     Corrected& c = scratch.get_or_create<Corrected>();   // in encode
//     const Corrected& c = scratch.get<Corrected>();       // in decode / transmitted
#include <memory>
#include <typeinfo>

#include "lowcomm/error.hpp"

namespace lowcomm {

class UnitScratch {
 public:
  // The value of type T this scratch holds (last step's, with its buffers), or a new
  // value-initialised T when it holds none or one of another type.
  template <class T>
  T& get_or_create() {
    if (auto* held = dynamic_cast<Held<T>*>(held_.get())) return held->value;
    auto fresh = std::make_unique<Held<T>>();
    T& value = fresh->value;
    held_ = std::move(fresh);
    return value;
  }

  // The T encode left here. Throws lowcomm::Error when there is none: decode or transmitted
  // called before this unit's encode, or with another unit's scratch.
  template <class T>
  T& get() {
    if (auto* held = dynamic_cast<Held<T>*>(held_.get())) return held->value;
    missing(typeid(T));
  }
  template <class T>
  const T& get() const {
    if (const auto* held = dynamic_cast<const Held<T>*>(held_.get())) return held->value;
    missing(typeid(T));
  }

  bool empty() const { return held_ == nullptr; }

 private:
  struct Base {
    virtual ~Base() = default;
  };
  template <class T>
  struct Held final : Base {
    T value{};
  };
  [[noreturn]] static void missing(const std::type_info& type);

  std::unique_ptr<Base> held_;
};

}  // namespace lowcomm
