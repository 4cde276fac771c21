#pragma once
// Whether this build runs under AddressSanitizer (the presets debug and fuzz). A test that sweeps
// large inputs to compare arithmetic bit for bit against a reference sweeps less there: the
// sanitizers find memory errors on the small and odd sizes as well as on the large ones, and run
// those loops 10 to 50 times slower. The optimised build (preset ci, or release) sweeps them all.
namespace lowcomm::test {

#if defined(__SANITIZE_ADDRESS__)  // GCC
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)  // Clang
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// `full` in an optimised build, `sanitized` under the sanitizers.
template <class T>
T unless_sanitized(T full, T sanitized) {
  return kSanitized ? sanitized : full;
}

}  // namespace lowcomm::test
