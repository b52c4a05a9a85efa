// SPDX-License-Identifier: GPL-2.0-or-later
/* rng.h - the simulator's own PRNG (splitmix64 seeding xoshiro256**), so
 * that runs are identical across libcs and never touch rand(). */
#ifndef LLCSIM_RNG_H
#define LLCSIM_RNG_H

#include <math.h>
#include <stdint.h>

struct sim_rng {
	uint64_t s[4];
};

static inline uint64_t
sim_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void
sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = sim_splitmix64(&seed);
}

static inline uint64_t
sim_rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5, result = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Uniform in [0, n) for n > 0 (Lemire's multiply; bias < 2^-32 for our n). */
static inline uint32_t
sim_rng_below(struct sim_rng *r, uint32_t n)
{
	return (uint32_t)(((sim_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform in [0, 1) with 53 bits. */
static inline double
sim_rng_unit(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Poisson(lambda), exact: Knuth's product of uniforms on chunks of at most
 * 16 (a sum of Poisson draws is Poisson), so that exp() never underflows;
 * O(lambda) draws, which the simulator pays anyway (one partner per wakeup). */
static inline uint64_t
sim_rng_poisson(struct sim_rng *r, double lambda)
{
	uint64_t n = 0;

	while (lambda > 0) {
		double chunk = lambda > 16 ? 16 : lambda, limit = exp(-chunk), p = 1.0;
		lambda -= chunk;
		for (;;) {
			p *= sim_rng_unit(r);
			if (p <= limit)
				break;
			n++;
		}
	}
	return n;
}

#endif
