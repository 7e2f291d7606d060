// Where the compiled search's restarts start (search.cpp): the random stream (splitmix64), a
// random configuration inside the limits, and a restart from where the last local search ended.
// Its specification is reljac/ik/search/restarts.py (the same constants, the same draws in the
// same order, so both backends restart from the same q for the same seed).
#pragma once

#include <cmath>

#include "search.hpp"

namespace reljac {
namespace search_restarts {

constexpr double kPartialBand = 0.01;  // a bounded coordinate this close to a limit (fraction of its range) is at it
constexpr int kFreshEvery = 3;         // every third restart draws every coordinate
constexpr double kPi = 3.14159265358979323846;

// splitmix64 (Steele, Lea, Flood 2014): the restarts' random stream.
struct SplitMix64 {
  unsigned long long state;
  unsigned long long next() {
    unsigned long long z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double between(double lower, double upper) { return lower + uniform() * (upper - lower); }  // [lower, upper)
};

// A random configuration inside the limits (SearchOptions.sample_kind), else the seed's values.
inline void sample_configuration(SplitMix64& random, const SearchOptions& o, const Vector& seed, Vector& q) {
  const int nq = static_cast<int>(q.size());
  for (int i = 0; i < nq; ++i) {
    switch (o.sample_kind(i)) {
      case 0:
        q(i) = random.between(o.lower(i), o.upper(i));
        break;
      case 2: {
        const double angle = -kPi + 2.0 * kPi * random.uniform();
        q(i) = std::cos(angle);
        q(i + 1) = std::sin(angle);
        ++i;
        break;
      }
      default:
        q(i) = seed(i);
    }
  }
}

// search.py's restart_configuration: from where the last local search ended (q), the bounded
// coordinates at a limit drawn anew, the others kept; every kFreshEvery-th restart, and when none
// is at a limit, sample_configuration().
inline void restart_configuration(SplitMix64& random, const SearchOptions& o, const Vector& seed, int restart,
                                  Vector& q) {
  if (restart % kFreshEvery) {
    bool any = false;
    for (long i = 0; i < q.size(); ++i) {
      if (o.sample_kind(i) != 0) continue;
      const double band = kPartialBand * (o.upper(i) - o.lower(i));
      if (q(i) - o.lower(i) <= band || o.upper(i) - q(i) <= band) {
        q(i) = random.between(o.lower(i), o.upper(i));
        any = true;
      }
    }
    if (any) return;
  }
  sample_configuration(random, o, seed, q);
}

}  // namespace search_restarts
}  // namespace reljac
