// SPDX-License-Identifier: MIT
// The learning rate a schedule gives at a step: torch's own formulas and recursions, replayed with
// the same float operations in the same order so the values match PyTorch bit for bit. Reading a
// scheduler's pickled state into an LrSchedule is lr_schedule.cpp's job.
#include "ckpt/state/lr_schedule.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace ckpt {

namespace {

constexpr double kPi = std::numbers::pi; // == Python's math.pi
// CosineAnnealingLR is replayed step by step (torch's recursion, not the closed form); past this many
// steps the closed form is used instead (they differ by rounding only).
constexpr int64_t kCosineReplayLimit = 20'000'000;

// Python's bisect.bisect_right (the same probes, so the same answer on unsorted lists too).
std::size_t bisectRight(const std::vector<int64_t>& a, int64_t x)
{
    std::size_t lo = 0, hi = a.size();
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (x < a[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

// Python's float % (the result takes the divisor's sign).
double pyMod(double a, double b)
{
    double r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

} // namespace

// CosineAnnealingWarmRestarts: where `step` lies in its cycle, and the cycle's length, as torch
// steps it one epoch at a time.
std::pair<int64_t, int64_t> LrSchedule::warmRestartPosition(int64_t step) const
{
    if (step < m_t0)
        return {step, m_t0};
    if (m_tMult == 1)
        return {step % m_t0, m_t0};
    int64_t cur = step, len = m_t0;
    while (cur >= len) {
        cur -= len;
        if (len > INT64_MAX / m_tMult)
            break;
        len *= m_tMult;
    }
    return {cur, len};
}

void LrSchedule::cosineAnnealing(int64_t first, int64_t last, std::vector<std::vector<double>>& out) const
{
    const double tMax = m_tMax, eta = m_etaMin;
    std::vector<double> lr(baseLrs.size());
    if (last > kCosineReplayLimit) {
        for (int64_t step = first; step <= last; ++step) {
            for (std::size_t g = 0; g < lr.size(); ++g)
                lr[g] = eta + (baseLrs[g] - eta) * (1 + std::cos(kPi * static_cast<double>(step) / tMax)) / 2;
            out.push_back(lr);
        }
        return;
    }
    // torch's chainable form (lr_scheduler.py CosineAnnealingLR.get_lr), in the same float operations:
    // near the trough 1 + cos() cancels, and the recursion drifts from the closed form by far more
    // than rounding, so only the replay gives what torch gives
    for (std::size_t g = 0; g < lr.size(); ++g)
        lr[g] = m_cosineStartsClosedForm ? eta + (baseLrs[g] - eta) * (1 + std::cos(kPi * 0.0 / tMax)) / 2 : baseLrs[g];
    if (first == 0)
        out.push_back(lr);
    double previousCos = std::cos(kPi * 0.0 / tMax);
    const double restart = 1 - std::cos(kPi / tMax);
    for (int64_t e = 1; e <= last; ++e) {
        const double cosE = std::cos(kPi * static_cast<double>(e) / tMax);
        if (pyMod(static_cast<double>(e - 1) - tMax, 2 * tMax) == 0) {
            for (std::size_t g = 0; g < lr.size(); ++g)
                lr[g] = lr[g] + (baseLrs[g] - eta) * restart / 2;
        } else {
            for (std::size_t g = 0; g < lr.size(); ++g)
                lr[g] = (1 + cosE) / (1 + previousCos) * (lr[g] - eta) + eta;
        }
        previousCos = cosE;
        if (e >= first)
            out.push_back(lr);
    }
}

std::vector<double> LrSchedule::lrAt(int64_t step) const
{
    return lrSeries(step, step).front();
}

std::vector<std::vector<double>> LrSchedule::lrSeries(int64_t first, int64_t last) const
{
    if (!recomputable)
        throw std::logic_error(kind + " cannot be recomputed: " + why);
    if (first < 0)
        throw std::out_of_range("negative scheduler position " + std::to_string(first));
    std::vector<std::vector<double>> out;
    if (last < first)
        return out;
    if (kind == "CosineAnnealingLR") {
        cosineAnnealing(first, last, out);
    } else if (kind == "SequentialLR") {
        // each stretch between milestones from its scheduler, in one pass per stretch
        for (int64_t step = first; step <= last;) {
            const std::size_t idx = bisectRight(m_milestones, step);
            const int64_t start = idx == 0 ? 0 : m_milestones[idx - 1];
            int64_t end = last;
            if (idx < m_milestones.size() && m_milestones[idx] > step)
                end = std::min(last, m_milestones[idx] - 1);
            auto part = children[idx].lrSeries(step - start, end - start);
            for (auto& lr : part)
                out.push_back(std::move(lr));
            step = end + 1;
        }
    } else {
        for (int64_t step = first; step <= last; ++step)
            out.push_back(formulaAt(step));
    }
    return out;
}

// NeMo's CosineAnnealing get_lr at last_epoch `step` (NVIDIA/NeMo@8cfedd72 nemo/core/optim/
// lr_scheduler.py WarmupAnnealHoldPolicy.get_lr, CosineAnnealing): with constant_steps, Megatron's
// linear warmup and cosine over decay_steps from base_lrs[0] for every group, then min_lr; without,
// a (step+1)/(warmup+1) warmup and a cosine from each group's base LR to min_lr at max_steps.
double LrSchedule::nemoCosineAnnealing(double base, int64_t step) const
{
    const auto& wd = m_warmupDecay;
    const double warmup = static_cast<double>(wd.warmup), decay = static_cast<double>(wd.decay);
    const double maxSteps = static_cast<double>(wd.total), t = static_cast<double>(step);
    auto megatron = [&] {
        const double maxLr = baseLrs.front();
        if (wd.warmup > 0 && t <= warmup)
            return maxLr * t / warmup;
        if (t > warmup + decay)
            return wd.minLr;
        return wd.minLr + 0.5 * (std::cos(kPi * (t - warmup) / decay) + 1.0) * (maxLr - wd.minLr);
    };
    if (wd.warmup > 0 && t <= warmup)
        return wd.constant == 0 ? base * (t + 1) / (warmup + 1) : megatron();
    if (wd.constant > 0 && warmup + decay < t && t <= maxSteps)
        return megatron();
    if (t > maxSteps)
        return wd.minLr;
    if (wd.constant == 0)
        return (base - wd.minLr) * 0.5 * (1 + std::cos(kPi * (t - warmup) / (maxSteps - warmup))) + wd.minLr;
    return megatron();
}

// Megatron-LM's OptimizerParamScheduler.get_lr at num_steps = `samples` (megatron/core/
// optimizer_param_scheduler.py at d98e8a64; docs/layouts.md §1): linear warmup from init_lr, then
// constant, min_lr past lr_decay_steps, inverse-square-root, or a linear or cosine decay to min_lr.
double LrSchedule::megatronLr(double maxLr, int64_t samples) const
{
    const auto& wd = m_warmupDecay;
    const double n = static_cast<double>(samples), warmup = static_cast<double>(wd.warmup);
    if (wd.warmup > 0 && samples <= wd.warmup)
        return wd.initLr + (maxLr - wd.initLr) * n / warmup;
    if (wd.style == "constant")
        return maxLr;
    if (samples > wd.decay)
        return wd.minLr;
    if (wd.style == "inverse-square-root")
        return std::max(wd.minLr, maxLr * std::sqrt(std::max(warmup, 1.0)) / std::sqrt(std::max(n, 1.0)));
    const double r = (n - warmup) / static_cast<double>(wd.decay - wd.warmup);
    const double coeff = wd.style == "linear" ? 1.0 - r : 0.5 * (std::cos(kPi * r) + 1.0);
    return wd.minLr + coeff * (maxLr - wd.minLr);
}

namespace {

// transformers@c26b2a29e500 src/transformers/optimization.py: a linear warmup over W steps, then the
// type's decay over T - W (cosine with num_cycles 0.5, get_scheduler's default). `wd` is the
// schedule's warmup/total/style (LrSchedule::m_warmupDecay, filled by readTransformersLambda).
template <typename WarmupDecay>
double transformersFactor(const WarmupDecay& wd, int64_t step)
{
    const double t = static_cast<double>(step), w = static_cast<double>(wd.warmup), total = static_cast<double>(wd.total);
    if (wd.style == "constant")
        return 1.0;
    if (step < wd.warmup)
        return t / std::max(1.0, w);
    if (wd.style == "constant_with_warmup")
        return 1.0;
    if (wd.style == "linear")
        return std::max(0.0, (total - t) / std::max(1.0, total - w));
    const double progress = (t - w) / std::max(1.0, total - w);
    return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * 0.5 * 2.0 * progress)));
}

} // namespace

std::vector<double> LrSchedule::formulaAt(int64_t step) const
{
    const double t = static_cast<double>(step);
    std::vector<double> out(baseLrs.size());
    auto each = [&](auto&& f) {
        for (std::size_t g = 0; g < out.size(); ++g)
            out[g] = f(baseLrs[g], g);
        return out;
    };
    if (kind == "NeMo CosineAnnealing")
        return each([&](double b, std::size_t) { return nemoCosineAnnealing(b, step); });
    if (kind == "Megatron OptimizerParamScheduler")
        return each([&](double b, std::size_t) { return megatronLr(b, step); });
    if (kind.starts_with("LambdaLR (transformers ")) // readTransformersLambda: optimization.py's lambdas
        return each([&](double b, std::size_t) { return b * transformersFactor(m_warmupDecay, step); });
    if (kind == "StepLR")
        return each([&](double b, std::size_t) { return b * std::pow(m_gamma, static_cast<double>(step / m_stepSize)); });
    if (kind == "MultiStepLR") {
        const double n = static_cast<double>(bisectRight(m_milestones, step));
        return each([&](double b, std::size_t) { return b * std::pow(m_gamma, n); });
    }
    if (kind == "ExponentialLR")
        return each([&](double b, std::size_t) { return b * std::pow(m_gamma, t); });
    if (kind == "ConstantLR")
        return each([&](double b, std::size_t) { return b * (m_factor + (step >= m_totalIters ? 1 : 0) * (1 - m_factor)); });
    if (kind == "LinearLR") {
        const double done = static_cast<double>(std::min(m_totalIters, step));
        return each([&](double b, std::size_t) {
            return b * (m_startFactor + (m_endFactor - m_startFactor) * done / static_cast<double>(m_totalIters));
        });
    }
    if (kind == "PolynomialLR") {
        const double done = static_cast<double>(std::min(m_totalIters, step));
        return each([&](double b, std::size_t) { return b * std::pow(1.0 - done / static_cast<double>(m_totalIters), m_power); });
    }
    if (kind == "CosineAnnealingWarmRestarts") {
        const auto [cur, len] = warmRestartPosition(step);
        const double c = 1 + std::cos(kPi * static_cast<double>(cur) / static_cast<double>(len));
        return each([&](double b, std::size_t) { return m_etaMin + (b - m_etaMin) * c / 2; });
    }
    if (kind == "OneCycleLR") {
        if (step > m_totalSteps)
            throw std::out_of_range("OneCycleLR position " + std::to_string(step) + " is past total_steps " +
                                    std::to_string(m_totalSteps) + " (torch raises ValueError)");
        return each([&](double, std::size_t g) {
            auto value = [&](const std::string& key) {
                for (const auto& [k, v] : m_groupValues[g])
                    if (k == key)
                        return v;
                return 0.0;
            };
            double start = 0;
            for (std::size_t i = 0; i < m_phases.size(); ++i) {
                const Phase& ph = m_phases[i];
                if (t <= ph.endStep || i + 1 == m_phases.size()) {
                    const double pct = (t - start) / (ph.endStep - start);
                    const double a = value(ph.startKey), z = value(ph.endKey);
                    if (m_annealCos)
                        return z + (a - z) / 2.0 * (std::cos(kPi * pct) + 1);
                    return (z - a) * pct + a;
                }
                start = ph.endStep;
            }
            return 0.0;
        });
    }
    if (kind == "CyclicLR") {
        const double cycle = std::floor(1 + t / m_totalSize);
        const double x = 1. + t / m_totalSize - cycle;
        const double scaleFactor = x <= m_stepRatio ? x / m_stepRatio : (x - 1) / (m_stepRatio - 1);
        const double at = m_scaleMode == "cycle" ? cycle : t;
        const double scale = m_mode == "triangular2" ? 1 / std::pow(2., at - 1)
                             : m_mode == "exp_range" ? std::pow(m_gamma, at)
                                                     : 1.;
        return each([&](double b, std::size_t g) { return b + (m_maxLrs[g] - b) * scaleFactor * scale; });
    }
    if (kind == "ChainedScheduler") {
        out = children.front().baseLrs;
        for (const LrSchedule& c : children) {
            const std::vector<double> lr = c.lrAt(step);
            for (std::size_t g = 0; g < out.size(); ++g)
                out[g] = c.baseLrs[g] == 0 ? 0 : out[g] * (lr[g] / c.baseLrs[g]);
        }
        return out;
    }
    throw std::logic_error("no formula for " + kind);
}
} // namespace ckpt
