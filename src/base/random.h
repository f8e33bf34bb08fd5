// The only source of randomness the core may use: an explicitly seeded
// generator passed in by the caller, so every run is reproducible.
#pragma once

#include <cstdint>
#include <random>

namespace tessera {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  // Uniform integer in [lo, hi].
  std::int64_t Uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_);
  }
  double UniformReal() { return std::uniform_real_distribution<double>(0.0, 1.0)(engine_); }
  bool Bernoulli(double p) { return UniformReal() < p; }
  double Exponential(double mean) { return std::exponential_distribution<double>(1.0 / mean)(engine_); }
  double LogNormal(double mu, double sigma) {
    return std::lognormal_distribution<double>(mu, sigma)(engine_);
  }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace tessera
