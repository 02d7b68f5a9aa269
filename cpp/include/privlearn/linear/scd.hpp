#pragma once
// Differentially private stochastic coordinate descent (Damaskinos, Mendler-Duenner, Guerraoui,
// Papandreou, Parnell, "Differentially Private Stochastic Coordinate Descent", AAAI 2021).
//
// Primal  P(theta) = (1/N) sum_i l_i(x_i^T theta) + (lambda/2) ||theta||^2
// Dual    D(alpha) = -(1/N) sum_i l*_i(-alpha_i) - (lambda/2) ||X^T alpha / (lambda N)||^2,
//         v = X^T alpha (kept as a running vector), theta(alpha) = v / (lambda N).
//
// Variants (iteration t = 0 .. T-1):
//   dual    Algorithm 1. Batch B_t (Poisson rate L/N or L rows without replacement); for every j
//           in B_t, from the SAME (alpha, v), zeta_j = argmin G*_j with sigma' = L (closed forms
//           below, in parallel); zeta_j <- sign(zeta_j) min(|zeta_j|, C); alpha_B += zeta_B + noise,
//           v += sum_j zeta_j x_j + noise (with C > 0 an exact fixed-point sum, fixed_sum.hpp;
//           without scaling a deterministic blocked float sum).
//   seq     SeqDP-SCD: the same batch, updates applied one after the other (sigma' = 1, each sees
//           the previous ones), scaled by C; noise once per batch.
//   scd     non-private SDCA: one example per step from a permutation per epoch, exact step
//           (sigma' = 1), no scaling, no noise.
//   primal  Section 3.2: L coordinates without replacement per step, sequential exact (ridge) or
//           one-Newton-step (logistic) coordinate minimisation with the auxiliary vector
//           w = X theta, steps scaled by C, noise on the L coordinates once per step.
// Closed forms of the dual step (s = sigma', q_j = ||x_j||^2, z_j = x_j^T theta, b = y_j alpha_j):
//   ridge     zeta = (y_j - z_j - alpha_j) / (1 + s q_j / (lambda N))
//   hinge     zeta = y_j clip(b + lambda N (1 - y_j z_j) / (s q_j), 0, 1) - alpha_j
//   logistic  one Newton step in beta = y_j (alpha_j + zeta) on
//             (1/N)[beta log beta + (1-beta) log(1-beta)] + (1/(lambda N^2))(x_j^T v y_j beta
//             + s q_j (y_j beta - alpha_j)^2 / 2), from beta0 = clip(b, 1e-4, 1-1e-4), result
//             clipped to [1e-4, 1 - 1e-4]; zeta = y_j beta - alpha_j. newton_steps = k > 1
//             instead solves the same 1-D problem by up to k Newton steps in the log-odds
//             u = logit(beta) (stopping once u moves by <= 1e-12; beta = sigma(u) clipped),
//             approaching the
//             exact coordinate minimiser; the privacy analysis does not depend on it (scaling
//             by C bounds every update).
// Noise on v (and on the primal coordinates): N(0, noise_std^2) per coordinate and step; the
// caller sets noise_std from the sensitivity (dual with Poisson batches and hidden_alpha:
// sigma C, below; dual with fixed batches: 2 sqrt(2) sigma C; seq / primal:
// 2 C sqrt(L (L+1)) sigma). Dual with clip > 0: v's noise is the exact discrete Gaussian on the
// lattice C 2^-k (random.hpp, noise_lattice with multiplier noise_std / clip; draws t m + k of
// noise_stream) added to the exact fixed-point sum, converted to reals only then.
// The hidden dual state (hidden_alpha; dual variant with Poisson batches only; issue 20): alpha
// gets no per-step noise and is never released (the caller keeps the returned alpha out of the
// release). Why that is private with noise sigma C on v alone: row j's update at step t reads
// only its own row, its own alpha_j and the released v_{t-1}, so alpha_j is a function of that
// row, its own sampling bits and jitter draws, and the released history. Condition on the bits
// and jitter of every row but the differing one, z (independent under Poisson sampling: the
// same law in both worlds). Given the history h, step t's release without z is
// N(mu_t(h), sigma^2 C^2 I); with z it is the mixture over the posterior of z's hidden state s
// of (1 - q) N(mu_t(h), .) + q N(mu_t(h) + c_s, .), ||c_s|| <= C (z's fresh bit is independent
// of s and h). Renyi divergence is jointly quasi-convex (van Erven, Harremoes 2014, Thm 13)
// and the hockey-stick divergence jointly convex, so each step, in both directions, is bounded
// by the subsampled Gaussian of sensitivity C; adaptive composition (Mironov 2017, Prop. 1)
// adds the steps, and removing the conditioning is one more equal-weight mixture. It fails for
// seq (later updates of a batch read z's unreleased update, so other rows' states depend on z)
// and for fixed batches (sampling without replacement couples the rows' bits): those keep the
// noise on alpha below. The full argument: python/privlearn/linear/scd_estimators.py.
// alpha_jitter (dual, seq): N(0, alpha_jitter^2) added to alpha_j of each batch row after its
// update, one draw per visit; a per-row perturbation of hidden state, free for privacy under
// hidden_alpha (an algorithmic knob).
// Noise on alpha (dual, seq; only when noise_std > 0 and not hidden_alpha), and why it is lazy. The accounting, per
// step the subsampled Gaussian mechanism on [alpha; v] with the sensitivity above, is valid for
// the hypothetical mechanism that adds fresh N(0, noise_std^2) to EVERY coordinate of alpha
// (and of v) at every step and releases the whole noisy (alpha, v): it is an adaptive
// composition of T subsampled Gaussian mechanisms, and the real algorithm, which releases only
// v (alpha is never released), is its post-processing. Noise added only to the batch's
// coordinates would break that argument (alpha_j would carry the exact effect of row j's past
// updates). The algorithm realises the hypothetical's noise lazily with the same distribution,
// one draw per visit: last_j = the number of steps whose noise alpha_j has received (0 at the
// start). When row j is in batch B_t it first gets N(0, (t - last_j) noise_std^2), the sum of
// the t - last_j independent N(0, noise_std^2) of steps last_j .. t-1 (its previous visit's own
// step included), and last_j = t; then zeta_j is computed from that alpha_j and added. alpha_j
// is only read when j is sampled, so every quantity the run computes has exactly the
// hypothetical's distribution. At the end, the returned alpha (a diagnostic) gets the
// outstanding N(0, (T - last_j) noise_std^2); D(alpha) recorded along the way uses the lazy
// alpha.
// Addresses (per row, never per batch position, so they do not depend on the batch order, the
// thread count or how rows are split among workers):
//   noise of row j at its visit at step t   sqrt(t - last_j) normal(noise_stream + 2, t N + j)
//   final catch-up of row j         sqrt(T - last_j) normal(noise_stream + 2, T N + j)
//   jitter of row j at step t       alpha_jitter normal(noise_stream + 1, t N + j)
//   noise on v at step t            normal(noise_stream, t M + k), k < M
//   primal: noise on coordinate r   normal(noise_stream, t M + a) for the a-th chosen coordinate
// Randomness of the batches: batch_stream (poisson_sample / choice_without_replacement at index
// t; scd: permutation at index = epoch; primal: choice of L coordinates at index t).
// Scaling to C: zeta <- sign(zeta) min(|zeta|, C), a NaN update becomes 0 (any |zeta| <= C keeps
// the proof). A run whose v, theta or alpha becomes non-finite throws std::invalid_argument.
// Data-independent schedules: rate > 0 replaces L / N as the Poisson rate (dual, seq);
// n_scale > 0 replaces N in lambda N everywhere (closed forms, z_j, theta = v / (lambda N'), the
// primal gradient (1/N') sum_i ... + lambda theta); the recorded objectives keep the true N.
// Parameter bounds: lambda [1e-12, 1e12], clip 0 or [1e-12, 1e12], noise_std [0, 1e12],
// alpha_jitter [0, 1e12] (dual, seq), hidden_alpha only for dual with Poisson batches,
// rate 0 or (0, 1], n_scale 0 or [1, 2^53] (losses.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include "privlearn/linear/losses.hpp"
#include "privlearn/random.hpp"
#include "privlearn/rows.hpp"
#include "privlearn/types.hpp"

namespace privlearn::linear {

enum class ScdVariant { dual = 0, seq = 1, scd = 2, primal = 3 };
ScdVariant scd_variant_from_string(const std::string& name);

struct ScdParams {
  Loss loss = Loss::squared;
  ScdVariant variant = ScdVariant::dual;
  bool poisson = true;       // dual / seq: Poisson (true) or fixed-size batches
  double lam = 1e-4;         // lambda > 0
  Index batch_size = 100;    // L
  Index epochs = 1;          // T = epochs * N / L (dual, seq), epochs * N (scd), epochs * M / L (primal)
  Index steps = 0;           // > 0 overrides T
  double clip = 0.0;         // C > 0 scales updates; 0 = no scaling
  double noise_std = 0.0;    // std of the Gaussian noise per coordinate; 0 = none
  double rate = 0.0;         // dual / seq Poisson: sampling rate in (0, 1]; 0 = L / N
  double n_scale = 0.0;      // N' used in lambda N'; 0 = the true N
  random::Key key{};
  std::uint64_t batch_stream = 1;
  std::uint64_t noise_stream = 2;
  int newton_steps = 1;      // logistic dual step: Newton iterations (1 = the paper's step)
  bool hidden_alpha = false; // dual, Poisson: no per-step noise on alpha (hidden dual state)
  double alpha_jitter = 0.0; // dual / seq: std of N(0, .) added to a batch row's alpha_j per visit
  Index record_every = 0;    // record diagnostics every k steps (and at the end); 0 = never
  int n_threads = 0;
};

struct ScdResult {
  VectorXd alpha;                      // dual variables (dual / seq / scd); empty for primal
  VectorXd v;                          // running v (dual variants) or theta * lambda N (primal)
  std::vector<std::int64_t> path_steps;
  std::vector<double> primal_path;     // P(theta) of the model released at that step
  std::vector<double> dual_path;       // D(alpha) (dual variants; NaN for primal)
  Index steps = 0;
};

Index scd_step_count(Index n, Index m, const ScdParams& p);

template <class Rows>
ScdResult scd_train(const Rows& X, const VecRef& y, const ScdParams& p);

// ---- one step of the dual variant (Poisson batches, clip > 0) in two pieces: the trainer's
// own steps, and the distributed fit's. A worker holding rows [offset, offset + X.rows()) of the
// n_total rows, with their alpha and last (the lazy-noise counters, 0 at the start), calls
// scd_partial_step: its part of the batch poisson_sample(index = t, n_total, q) (samplers.hpp),
// the rows' catch-up noise, the scaled updates zeta_j from the broadcast v, their sum
// sum_j zeta_j x_j in fixed-point units of C into `units` (length m, fixed_sum.hpp), and
// alpha_j += zeta_j (+ the jitter); it returns the first non-finite row (global index) or -1. The driver adds
// the workers' units and calls scd_apply_units (v += the sum, then v's noise). At the end each
// worker may call scd_finish_alpha (the outstanding catch-up noise of a returned alpha). The
// update sum is exact, so the run equals scd_train's bit for bit for any split of the rows.
void scd_check_distributed(Index n_total, Index m, const ScdParams& p);
template <class Rows>
Index scd_partial_step(const Rows& X, const VecRef& y, double* alpha, std::int64_t* last,
                       const VectorXd& v, Index t, Index offset, Index n_total,
                       const ScdParams& p, std::int64_t* units);
void scd_apply_units(VectorXd& v, const std::int64_t* units, Index t, const ScdParams& p);
void scd_finish_alpha(double* alpha, const std::int64_t* last, Index count, Index steps,
                      Index offset, Index n_total, const ScdParams& p);

// Objectives used for the diagnostics (and by tests).
template <class Rows>
double primal_objective(const Rows& X, const VecRef& y, Loss loss, double lam, const VecRef& theta);
template <class Rows>
double dual_objective(const Rows& X, const VecRef& y, Loss loss, double lam, const VecRef& alpha);

extern template ScdResult scd_train<DenseRows>(const DenseRows&, const VecRef&, const ScdParams&);
extern template ScdResult scd_train<CsrRows>(const CsrRows&, const VecRef&, const ScdParams&);
extern template Index scd_partial_step<DenseRows>(const DenseRows&, const VecRef&, double*,
                                                  std::int64_t*, const VectorXd&, Index, Index,
                                                  Index, const ScdParams&, std::int64_t*);

}  // namespace privlearn::linear
