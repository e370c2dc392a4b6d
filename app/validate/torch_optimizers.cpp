// SPDX-License-Identifier: MIT
// torch.optim's for-loop update rules in LibTorch ops. Each function follows the
// `_single_tensor_<name>` function of torch/optim/<name>.py line by line (the real-dtype path,
// capturable=False, differentiable=False): the same ops on the same operands in the same order, with
// Python floats as C++ doubles, so the result is bitwise the Python one. Sources read:
//   torch 1.13: Debian 12's python3-torch 1.13.0a0, /usr/lib/python3/dist-packages/torch/optim/*.py
//               (the tests compare against it bitwise);
//   torch 2.x:  pytorch main, late 2025, from forks synced to it: cyyever/pytorch@b1d94d61 (adam.py,
//               adadelta.py), @7753b50b (sgd.py), @7b617aeb (rmsprop.py, adagrad.py, radam.py),
//               @a9e0fe66 (adamax.py, nadam.py), ROCm/pytorch@40756461 (adamw.py, AdamW(Adam)); and
//               the releases where a form changed: 2.0 adam@1c9bb8f6 / nadam@01153da6, 2.1
//               adam@3fccbfec / nadam@0d47bdee / radam@56815f5f / adamax+rmsprop@260d71f6, 2.2
//               radam@29948d00, 2.3 radam@d91936db, 2.4 adam@18e337dc (pytorch/pytorch).
//   Gated on the probe's release:
//   - 2.0: NAdam's mu_product_next = mu_product.item() * mu_next in double (1.13 multiplied the
//          float32 tensor by mu a second time);
//   - 2.1: first moments (Adam, AdamW, Adamax, NAdam, RAdam) and RMSprop's centered grad_avg use
//          lerp_(grad, 1 - beta) instead of mul_(beta).add_(grad, alpha=1 - beta); NAdam gains
//          decoupled_weight_decay (2.2 for RAdam, 2.7 for Adam);
//   - 2.3: RAdam's rect and adaptive factor use x ** 0.5 instead of math.sqrt;
//   - 2.5: Adam's bias_correction2 ** 0.5 instead of math.sqrt.
//   The 2.x branches have not run against a torch 2.x here (tests/gpu/validate_on_gpu.sh does).
// Not replayed here but checked: SGD, dense Adagrad and Adadelta did not change arithmetic.
// On CUDA torch 2.x defaults to the foreach ("multi tensor") kernels, which do the same arithmetic
// per element but may round a fused step differently; the validator compares within --rtol there.
#include "app/validate/torch_optimizers.h"

#include <cmath>
#include <set>
#include <stdexcept>

namespace ckpt::validate {
namespace {

double hp(const OptimizerGroup& g, const char* key, double fallback)
{
    const auto it = g.hyper.find(key);
    return it == g.hyper.end() ? fallback : it->second;
}

bool flag(const OptimizerGroup& g, const char* key)
{
    const auto it = g.flags.find(key);
    return it != g.flags.end() && it->second;
}

// torch.view_as_real when the parameter is complex: torch's loops update the real view in place.
at::Tensor realView(const at::Tensor& t)
{
    return t.is_complex() ? at::view_as_real(t) : t;
}

at::Tensor zerosLike(const at::Tensor& p)
{
    return at::zeros_like(p, at::MemoryFormat::Preserve);
}

// `step_t += 1` on torch's float32 step tensor, then `_get_value(step_t)` / `step_t.item()`.
double nextFloatStep(TorchParamState& s)
{
    const float next = static_cast<float>(s.step.value_or(0)) + 1.0f;
    s.step = static_cast<double>(next);
    return *s.step;
}

// `state['step'] += 1` on a Python int (RMSprop and Adadelta in torch 1.x).
double nextIntStep(TorchParamState& s)
{
    s.step = std::floor(s.step.value_or(0)) + 1;
    return *s.step;
}

at::Tensor& slot(TorchParamState& s, const char* key)
{
    at::Tensor& t = s.tensors[key];
    if (!t.defined())
        throw std::runtime_error(std::string("the optimizer state has no '") + key + "' for a parameter that has state");
    return t;
}

} // namespace

TorchOptimUpdate::TorchOptimUpdate(std::string type, const std::string& torchVersion) : m_type(std::move(type))
{
    // "1.13.0a0+git...", "2.5.1+cu121": major.minor; an unreadable version keeps 1.13's formulas.
    int major = 0, minor = 0;
    if (std::sscanf(torchVersion.c_str(), "%d.%d", &major, &minor) == 2 && major > 0) {
        m_major = major;
        m_minor = minor;
    }
}

bool TorchOptimUpdate::replays(const std::string& type)
{
    static const std::set<std::string> known = {"Adam", "AdamW", "SGD", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta"};
    return known.contains(type);
}

std::string TorchOptimUpdate::formulas() const
{
    return "torch " + std::to_string(m_major) + "." + std::to_string(m_minor) + " for-loop formulas of " + m_type;
}

std::string TorchOptimUpdate::unsupported(const OptimizerGroup& g) const
{
    if (flag(g, "capturable") || flag(g, "differentiable"))
        return "capturable/differentiable " + m_type + " keeps its step on the device and computes its bias corrections "
               "as tensors; only the default path is replayed";
    return {};
}

void TorchOptimUpdate::initialise(const OptimizerGroup& g, const at::Tensor& p, TorchParamState& s) const
{
    const std::string& t = m_type;
    if (t == "Adam" || t == "AdamW") {
        s.step = 0;
        s.tensors["exp_avg"] = zerosLike(p);
        s.tensors["exp_avg_sq"] = zerosLike(p);
        if (flag(g, "amsgrad"))
            s.tensors["max_exp_avg_sq"] = zerosLike(p);
    } else if (t == "SGD") {
        // no state until the first step creates momentum_buffer (below)
    } else if (t == "RMSprop") {
        s.step = 0;
        s.tensors["square_avg"] = zerosLike(p);
        if (hp(g, "momentum", 0) > 0)
            s.tensors["momentum_buffer"] = zerosLike(p);
        if (flag(g, "centered"))
            s.tensors["grad_avg"] = zerosLike(p);
    } else if (t == "Adagrad") {
        // Adagrad creates its state in __init__: sum = full_like(p, initial_accumulator_value)
        s.step = 0;
        s.tensors["sum"] = at::full_like(p, hp(g, "initial_accumulator_value", 0), at::MemoryFormat::Preserve);
    } else if (t == "Adamax") {
        s.step = 0;
        s.tensors["exp_avg"] = zerosLike(p);
        s.tensors["exp_inf"] = zerosLike(p);
    } else if (t == "NAdam") {
        s.step = 0;
        s.tensors["mu_product"] = at::ones({}, at::TensorOptions().dtype(at::kFloat));
        s.tensors["exp_avg"] = zerosLike(p);
        s.tensors["exp_avg_sq"] = zerosLike(p);
    } else if (t == "RAdam") {
        s.step = 0;
        s.tensors["exp_avg"] = zerosLike(p);
        s.tensors["exp_avg_sq"] = zerosLike(p);
    } else if (t == "Adadelta") {
        s.step = 0;
        s.tensors["square_avg"] = zerosLike(p);
        s.tensors["acc_delta"] = zerosLike(p);
    }
}

void TorchOptimUpdate::update(const OptimizerGroup& g, at::Tensor param, at::Tensor grad, TorchParamState& s) const
{
    at::NoGradGuard noGrad;
    const std::string& t = m_type;
    const double lr = hp(g, "lr", 1e-3), wd = hp(g, "weight_decay", 0), eps = hp(g, "eps", 1e-8);
    const bool maximize = flag(g, "maximize");
    if (maximize)
        grad = grad.neg();

    if (t == "Adam" || t == "AdamW") {
        const double beta1 = hp(g, "beta1", 0.9), beta2 = hp(g, "beta2", 0.999);
        at::Tensor& expAvg0 = slot(s, "exp_avg");
        at::Tensor& expAvgSq0 = slot(s, "exp_avg_sq");
        // Adam: step, then weight decay into the gradient, then the complex views; AdamW decays the
        // parameter itself (adamw.py: param.mul_(1 - lr * weight_decay)) after the views and step.
        double step = 0;
        const bool decoupled = t == "AdamW" || flag(g, "decoupled_weight_decay");
        if (!decoupled) {
            step = nextFloatStep(s);
            if (wd != 0)
                grad = grad.add(param, wd);
        }
        at::Tensor p = realView(param), gr = realView(grad), expAvg = realView(expAvg0), expAvgSq = realView(expAvgSq0);
        if (decoupled) {
            step = nextFloatStep(s);
            if (wd != 0 || !atLeast(2, 7)) // 2.7's AdamW(Adam) skips the decay when it is 0; 1 - 0 changes nothing
                p.mul_(1 - lr * wd);
        }
        if (atLeast(2, 1))
            expAvg.lerp_(gr, 1 - beta1); // torch >= 2.1: adam.py/adamw.py use lerp_ for the first moment
        else
            expAvg.mul_(beta1).add_(gr, 1 - beta1);
        expAvgSq.mul_(beta2).addcmul_(gr, t == "Adam" ? gr.conj() : gr, 1 - beta2);
        const double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
        const double stepSize = lr / bc1, bc2Sqrt = atLeast(2, 5) ? std::pow(bc2, 0.5) : std::sqrt(bc2);
        at::Tensor denom;
        if (flag(g, "amsgrad")) {
            at::Tensor& maxSq = slot(s, "max_exp_avg_sq");
            at::Tensor m = realView(maxSq);
            at::maximum_out(m, m, expAvgSq);
            denom = (m.sqrt() / bc2Sqrt).add_(eps);
        } else {
            denom = (expAvgSq.sqrt() / bc2Sqrt).add_(eps);
        }
        p.addcdiv_(expAvg, denom, -stepSize);
    } else if (t == "SGD") {
        const double momentum = hp(g, "momentum", 0), dampening = hp(g, "dampening", 0);
        at::Tensor dp = grad;
        if (wd != 0)
            dp = dp.add(param, wd);
        if (momentum != 0) {
            at::Tensor& buf = s.tensors["momentum_buffer"];
            if (!buf.defined())
                buf = at::clone(dp).detach();
            else
                buf.mul_(momentum).add_(dp, 1 - dampening);
            dp = flag(g, "nesterov") ? dp.add(buf, momentum) : buf;
        }
        param.add_(dp, -lr);
    } else if (t == "RMSprop") {
        const double alpha = hp(g, "alpha", 0.99), momentum = hp(g, "momentum", 0);
        nextIntStep(s);
        if (wd != 0)
            grad = grad.add(param, wd);
        at::Tensor p = realView(param), gr = realView(grad), squareAvg = realView(slot(s, "square_avg"));
        squareAvg.mul_(alpha).addcmul_(gr, gr, 1 - alpha);
        at::Tensor avg;
        if (flag(g, "centered")) {
            at::Tensor gradAvg = realView(slot(s, "grad_avg"));
            if (atLeast(2, 1))
                gradAvg.lerp_(gr, 1 - alpha); // torch >= 2.1: rmsprop.py grad_avg.lerp_
            else
                gradAvg.mul_(alpha).add_(gr, 1 - alpha);
            avg = squareAvg.addcmul(gradAvg, gradAvg, -1).sqrt_();
        } else {
            avg = squareAvg.sqrt();
        }
        avg = avg.add_(eps);
        if (momentum > 0) {
            at::Tensor buf = realView(slot(s, "momentum_buffer"));
            buf.mul_(momentum).addcdiv_(gr, avg);
            p.add_(buf, -lr);
        } else {
            p.addcdiv_(gr, avg, -lr);
        }
    } else if (t == "Adagrad") {
        const double step = nextFloatStep(s);
        if (wd != 0)
            grad = grad.add(param, wd);
        const double clr = lr / (1 + (step - 1) * hp(g, "lr_decay", 0));
        at::Tensor p = realView(param), gr = realView(grad), sum = realView(slot(s, "sum"));
        sum.addcmul_(gr, gr, 1);
        at::Tensor std = sum.sqrt().add_(eps);
        p.addcdiv_(gr, std, -clr);
    } else if (t == "Adamax") {
        const double beta1 = hp(g, "beta1", 0.9), beta2 = hp(g, "beta2", 0.999);
        const double step = nextFloatStep(s);
        if (wd != 0)
            grad = grad.add(param, wd);
        at::Tensor p = realView(param), gr = realView(grad), expAvg = realView(slot(s, "exp_avg")), expInf = realView(slot(s, "exp_inf"));
        if (atLeast(2, 1))
            expAvg.lerp_(gr, 1 - beta1); // torch >= 2.1: adamax.py exp_avg.lerp_
        else
            expAvg.mul_(beta1).add_(gr, 1 - beta1);
        at::Tensor normBuf = at::cat({expInf.mul_(beta2).unsqueeze(0), gr.abs().add_(eps).unsqueeze_(0)}, 0);
        at::amax_out(expInf, normBuf, {0}, false);
        const double clr = lr / (1 - std::pow(beta1, step));
        p.addcdiv_(expAvg, expInf, -clr);
    } else if (t == "NAdam") {
        const double beta1 = hp(g, "beta1", 0.9), beta2 = hp(g, "beta2", 0.999), decay = hp(g, "momentum_decay", 4e-3);
        const double step = nextFloatStep(s);
        at::Tensor& muProduct = slot(s, "mu_product");
        at::Tensor& expAvg = slot(s, "exp_avg");
        at::Tensor& expAvgSq = slot(s, "exp_avg_sq");
        const double bc2 = 1 - std::pow(beta2, step);
        if (wd != 0) {
            if (flag(g, "decoupled_weight_decay"))
                param.mul_(1 - lr * wd);
            else
                grad = grad.add(param, wd);
        }
        const double mu = beta1 * (1. - 0.5 * std::pow(0.96, step * decay));
        const double muNext = beta1 * (1. - 0.5 * std::pow(0.96, (step + 1) * decay));
        muProduct.mul_(mu);
        if (atLeast(2, 1))
            expAvg.lerp_(grad, 1 - beta1);
        else
            expAvg.mul_(beta1).add_(grad, 1 - beta1);
        expAvgSq.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
        at::Tensor denom = expAvgSq.div(bc2).sqrt().add_(eps);
        // 1.13 multiplied the (already updated) float32 mu_product by mu once more; 2.0 fixed it in double
        const double muProductNext = atLeast(2, 0) ? muProduct.item<double>() * muNext
                                                   : (muProduct * mu * muNext).item<double>();
        param.addcdiv_(grad, denom, -lr * (1. - mu) / (1. - muProduct.item<double>()));
        param.addcdiv_(expAvg, denom, -lr * muNext / (1. - muProductNext));
    } else if (t == "RAdam") {
        const double beta1 = hp(g, "beta1", 0.9), beta2 = hp(g, "beta2", 0.999);
        const double step = nextFloatStep(s);
        at::Tensor& expAvg = slot(s, "exp_avg");
        at::Tensor& expAvgSq = slot(s, "exp_avg_sq");
        const double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
        if (wd != 0) {
            if (flag(g, "decoupled_weight_decay"))
                param.mul_(1 - lr * wd);
            else
                grad = grad.add(param, wd);
        }
        if (atLeast(2, 1))
            expAvg.lerp_(grad, 1 - beta1);
        else
            expAvg.mul_(beta1).add_(grad, 1 - beta1);
        expAvgSq.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
        const at::Tensor corrected = expAvg / bc1;
        const double rhoInf = 2 / (1 - beta2) - 1;
        const double rhoT = rhoInf - 2 * step * std::pow(beta2, step) / bc2;
        const bool powSqrt = atLeast(2, 3); // 2.3: x ** 0.5 where 1.13-2.2 called math.sqrt
        auto root = [&](double x) { return powSqrt ? std::pow(x, 0.5) : std::sqrt(x); };
        if (rhoT > 5.) {
            const double rect = root((rhoT - 4) * (rhoT - 2) * rhoInf / ((rhoInf - 4) * (rhoInf - 2) * rhoT));
            // Python's float / tensor is Tensor.__rtruediv__: tensor.reciprocal() * float (Debian torch 1.13, torch/_tensor.py __rdiv__),
            // which rounds differently from ATen's Scalar / Tensor (fill, then div_)
            const at::Tensor adaptive = expAvgSq.sqrt().add_(eps).reciprocal() * root(bc2);
            param.add_(corrected * lr * adaptive * rect, -1.0);
        } else {
            param.add_(corrected * lr, -1.0);
        }
    } else if (t == "Adadelta") {
        const double rho = hp(g, "rho", 0.9);
        nextIntStep(s);
        if (wd != 0)
            grad = grad.add(param, wd);
        at::Tensor squareAvg = realView(slot(s, "square_avg")), accDelta = realView(slot(s, "acc_delta")), gr = realView(grad);
        squareAvg.mul_(rho).addcmul_(gr, gr, 1 - rho);
        at::Tensor std = squareAvg.add(eps).sqrt_();
        at::Tensor delta = accDelta.add(eps).sqrt_().div_(std).mul_(gr);
        accDelta.mul_(rho).addcmul_(delta, delta, 1 - rho);
        if (param.is_complex())
            delta = at::view_as_complex(delta);
        param.add_(delta, -lr);
    } else {
        throw std::runtime_error(m_type + " is not replayed");
    }
}

} // namespace ckpt::validate
