#pragma once
// What of this rank's input a unit's exchange carried (Compressor::transmitted), in gradient
// units, in the one of three forms that the compressor has it in: error feedback keeps
// input − transmitted for the next step and does the cheapest arithmetic each form allows.
//   Dense      the compressor wrote every element of the `out` it was given (quantisation:
//              the dequantised values);
//   Entries    +0 everywhere except at a few distinct entries (top-k, random-k): error feedback
//              updates its residual there alone, instead of writing two dense vectors;
//   Aggregate  bitwise the aggregate the unit's last decode wrote (PowerSGD, as its paper code:
//              every rank applies the reconstruction it sent), so nothing is computed twice.
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm {

class Transmitted {
 public:
  enum class Form : std::uint8_t { Dense, Entries, Aggregate };

  // `out` holds it.
  static Transmitted dense() { return Transmitted(Form::Dense, {}, {}); }
  // indices distinct, into the unit; values bitwise what the dense form holds there (so +0, not
  // −0, where a value is zero). The spans must stay valid until the unit's next encode: they
  // usually point into the compressor's scratch.
  static Transmitted entries(std::span<const std::int64_t> indices, std::span<const float> values);
  // Equals the aggregate decode last wrote.
  static Transmitted aggregate() { return Transmitted(Form::Aggregate, {}, {}); }

  Form form() const { return form_; }
  std::span<const std::int64_t> indices() const { return indices_; }  // Entries only
  std::span<const float> values() const { return values_; }           // Entries only

  // The dense form in `out` (which for Dense already holds it, as transmitted wrote it there),
  // given the aggregate the unit's last decode wrote: for callers that want the values
  // themselves (tests, the fixtures) rather than error feedback's shortcuts.
  void write_dense(kernels::Backend backend, std::span<const float> aggregate, std::span<float> out) const;

 private:
  Transmitted(Form form, std::span<const std::int64_t> indices, std::span<const float> values)
      : form_(form), indices_(indices), values_(values) {}

  Form form_;
  std::span<const std::int64_t> indices_;
  std::span<const float> values_;
};

}  // namespace lowcomm
