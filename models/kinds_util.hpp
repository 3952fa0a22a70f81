#pragma once
// Internal helpers for kinds_*.cpp: overflow-checked products and sums, and dimension checks.
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "sim/core/units.hpp"

namespace trainsim::models::kinds::detail {

// Product of counts, overflow-checked (a nonsense model gets an error, never a wrapped size).
inline std::int64_t prod(std::initializer_list<std::int64_t> factors) {
  std::int64_t r = 1;
  for (auto f : factors) r = core::checked_mul(r, f);
  return r;
}
// Sum of counts, overflow-checked like prod (a layer's parameters from its matrices and biases).
inline std::int64_t sum(std::initializer_list<std::int64_t> terms) {
  std::int64_t r = 0;
  for (auto t : terms) r = core::checked_add(r, t);
  return r;
}
inline core::Bytes bytes(std::initializer_list<std::int64_t> factors) {
  return core::Bytes{prod(factors)};
}

inline void require_positive(std::int64_t v, const char* what) {
  if (v <= 0)
    throw std::invalid_argument(std::string(what) + " must be a positive integer, got " +
                                std::to_string(v));
}
inline void require_non_negative(std::int64_t v, const char* what) {
  if (v < 0)
    throw std::invalid_argument(std::string(what) + " must be zero or positive, got " +
                                std::to_string(v));
}
inline void require_divides(std::int64_t divisor, const char* divisor_name, std::int64_t n,
                            const char* n_name) {
  if (n % divisor != 0)
    throw std::invalid_argument(std::string(divisor_name) + " (" + std::to_string(divisor) +
                                ") must divide " + n_name + " (" + std::to_string(n) + ")");
}

}  // namespace trainsim::models::kinds::detail
