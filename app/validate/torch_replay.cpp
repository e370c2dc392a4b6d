// SPDX-License-Identifier: MIT
// The only translation unit of the validator that includes LibTorch (each one costs ~10 s to
// compile). It never opens a checkpoint: W, the optimizer state, the batches and the generator
// states arrive as bytes the core read safely; the probe's TorchScript module is the one file
// torch::jit::load reads.
#include "app/validate/replay.h"
#include "app/validate/torch_optimizers.h"

#include "ckpt/io/sha256.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <ATen/Context.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <set>
#include <sstream>

namespace ckpt::validate {
namespace {

at::ScalarType scalarTypeOf(DType t)
{
    switch (t) {
    case DType::Bool: return at::kBool;
    case DType::UInt8: return at::kByte;
    case DType::Int8: return at::kChar;
    case DType::Int16: return at::kShort;
    case DType::Int32: return at::kInt;
    case DType::Int64: return at::kLong;
    case DType::Float16: return at::kHalf;
    case DType::BFloat16: return at::kBFloat16;
    case DType::Float32: return at::kFloat;
    case DType::Float64: return at::kDouble;
    case DType::Complex64: return at::kComplexFloat;
    case DType::Complex128: return at::kComplexDouble;
    default: throw std::runtime_error("dtype " + std::string(dtypeName(t)) + " is not supported by the replay");
    }
}

at::Tensor toTorch(const HostTensor& h)
{
    const auto type = scalarTypeOf(h.dtype);
    auto t = torch::empty(h.shape, torch::TensorOptions().dtype(type));
    if (static_cast<std::size_t>(t.nbytes()) != h.bytes.size())
        throw std::runtime_error("a tensor's bytes do not match its shape and dtype");
    std::memcpy(t.data_ptr(), h.bytes.data(), h.bytes.size());
    return t;
}

std::vector<std::byte> bytesOf(const at::Tensor& t)
{
    const at::Tensor c = t.detach().to(at::kCPU).contiguous();
    std::vector<std::byte> out(static_cast<std::size_t>(c.nbytes()));
    std::memcpy(out.data(), c.data_ptr(), out.size());
    return out;
}

// ckpt_writer.tensor_digest: sum and L2 in float64, SHA-256 of the little-endian bytes.
TensorDigest digest(const at::Tensor& t)
{
    const at::Tensor c = t.detach().to(at::kCPU).contiguous();
    const at::Tensor d = c.is_complex() ? c.abs().to(at::kDouble) : c.to(at::kDouble);
    TensorDigest out;
    std::string name = c10::toString(c.scalar_type());
    static const std::map<std::string, std::string> pyNames = {
        {"Float", "float32"}, {"Double", "float64"}, {"Half", "float16"}, {"BFloat16", "bfloat16"},
        {"Long", "int64"}, {"Int", "int32"}, {"Short", "int16"}, {"Char", "int8"}, {"Byte", "uint8"},
        {"Bool", "bool"}, {"ComplexFloat", "complex64"}, {"ComplexDouble", "complex128"}};
    out.dtype = pyNames.contains(name) ? pyNames.at(name) : name;
    out.shape = c.sizes().vec();
    out.sum = d.sum().item<double>();
    out.l2 = d.norm().item<double>();
    const auto* p = static_cast<const std::byte*>(c.data_ptr());
    out.sha256 = sha256Hex(std::span<const std::byte>(p, static_cast<std::size_t>(c.nbytes())));
    return out;
}

c10::Device resolveDevice(const std::string& spec, std::vector<std::string>& notes)
{
    const bool cuda = torch::cuda::is_available();
    if (spec == "auto") {
        if (!cuda)
            notes.push_back("--device auto: no CUDA device is visible to this LibTorch, the update runs on the CPU");
        return cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    }
    c10::Device d(spec); // throws on a malformed spec
    if (d.is_cuda()) {
        if (!cuda)
            throw std::runtime_error("--device " + spec + ": this LibTorch sees no CUDA device (built for CPU, or no driver)");
        const int index = d.has_index() ? d.index() : 0;
        if (index >= static_cast<int>(torch::cuda::device_count()))
            throw std::runtime_error("--device " + spec + ": only " + std::to_string(torch::cuda::device_count())
                                     + " CUDA device(s) are visible");
        return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
    }
    if (!d.is_cpu())
        throw std::runtime_error("--device " + spec + ": use auto, cpu, cuda or cuda:N");
    return d;
}

class Replay {
public:
    Replay(const ReplayInput& in, const ReplayProgress& progress) : m_in(in), m_progress(progress) {}

    ReplayResult run()
    {
        m_out.torchVersion = libtorchVersion();
        m_out.cudaAvailable = torch::cuda::is_available();
        m_device = resolveDevice(m_in.device, m_out.notes);
        m_out.device = m_device.str();
        configureDeterminism();
        m_progress("module", "loading the TorchScript module " + m_in.modulePath + " and W into it, strictly");
        try {
            m_module = torch::jit::load(m_in.modulePath, c10::Device(c10::kCPU));
        } catch (const std::exception& e) {
            throw std::runtime_error(m_in.modulePath + ": not a TorchScript module LibTorch " + m_out.torchVersion
                                     + " can load: " + firstLine(e.what()));
        }
        if (m_in.method != "forward" && !m_module.find_method(m_in.method))
            throw std::runtime_error(m_in.modulePath + ": the module has no method '" + m_in.method + "'");
        if (!loadWeights())
            return std::move(m_out);
        m_module.to(m_device);
        m_module.train(true);
        collectParameters();
        m_progress("optimizer", TorchOptimUpdate::replays(m_in.optimizerType)
                                    ? "restoring " + m_in.optimizerType + "'s state from the checkpoint's param groups and state"
                                    : "the update is forward/backward only (" + (m_in.optimizerType.empty() ? std::string("no optimizer")
                                                                                 : m_in.optimizerType) + " is not replayed)");
        buildOptimizer();
        m_cpuNow = m_in.cpuGenerator;
        if (m_in.scaler)
            m_scaler = *m_in.scaler;
        for (std::size_t k = 0; k < m_in.updates.size(); ++k) {
            const UpdateInput& u = m_in.updates[k];
            m_progress("update", (m_in.updates.size() > 1 ? "update " + std::to_string(k + 1) + " of "
                                                              + std::to_string(m_in.updates.size()) + ": " : std::string())
                                     + "forward/backward of " + std::to_string(u.microBatches.size()) + " micro-batch(es) on "
                                     + m_out.device);
            UpdateResult& r = m_out.updates.emplace_back();
            for (std::size_t i = 0; i < m_groups.size() && i < u.lr.size(); ++i)
                m_groups[i].hyper["lr"] = u.lr[i];
            for (const auto& [name, t] : m_params)
                r.paramsBefore[name] = digest(t);
            for (const auto& [name, t] : m_buffers)
                r.paramsBefore[name] = digest(t);
            readOptimizerState(r.momentsBefore, r.stepBefore);
            r.cpuGeneratorBefore = m_cpuNow;
            forwardBackward(u, r);
            finishUpdate(u, r);
            for (const auto& [name, t] : m_params)
                r.paramsAfter[name] = digest(t);
            for (const auto& [name, t] : m_buffers)
                r.paramsAfter[name] = digest(t);
            readOptimizerState(r.momentsAfter, r.stepAfter);
            r.cpuGeneratorAfter = m_cpuNow;
        }
        return std::move(m_out);
    }

private:
    static std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

    void configureDeterminism()
    {
        // Deterministic kernels where LibTorch has them; warn_only so an op without one still runs
        // (its result then lands in the numerics component, not in a crash).
        at::globalContext().setDeterministicAlgorithms(true, true);
        at::globalContext().setDeterministicCuDNN(true);
        at::globalContext().setBenchmarkCuDNN(false);
        if (m_in.threads > 0)
            at::set_num_threads(m_in.threads);
    }

    std::map<std::string, at::Tensor> moduleTensors()
    {
        std::map<std::string, at::Tensor> out;
        for (const auto& p : m_module.named_parameters(true))
            out.emplace(p.name, p.value);
        for (const auto& b : m_module.named_buffers(true))
            out.emplace(b.name, b.value);
        return out;
    }

    bool loadWeights()
    {
        std::map<std::string, at::Tensor> target; // model key -> module tensor
        std::vector<std::string> outside;
        for (auto& [name, t] : moduleTensors()) {
            if (name.starts_with(m_in.statePrefix))
                target.emplace(name.substr(m_in.statePrefix.size()), t);
            else
                outside.push_back(name);
        }
        // A DDP-wrapped save carries "module." on every key: said, then stripped (never silently).
        bool stripModule = !m_in.weights.empty();
        for (const auto& [key, _] : m_in.weights)
            stripModule = stripModule && key.starts_with("module.") && !target.contains(key);
        if (stripModule)
            m_out.load.push_back({"prefix", "module.", "every key of W starts with 'module.' (a DDP-wrapped save); "
                                                       "matched without it"});
        std::set<std::string> seen;
        for (const auto& [rawKey, host] : m_in.weights) {
            const std::string key = stripModule ? rawKey.substr(7) : rawKey;
            const auto it = target.find(key);
            if (it == target.end()) {
                m_out.load.push_back({"unexpected", rawKey, "in W but not in the module"});
                continue;
            }
            seen.insert(key);
            const at::Tensor src = toTorch(host);
            if (src.sizes() != it->second.sizes()) {
                m_out.load.push_back({"shape", rawKey, "W " + shapeText(src.sizes()) + ", module " + shapeText(it->second.sizes())});
                continue;
            }
            if (src.scalar_type() != it->second.scalar_type())
                m_out.load.push_back({"dtype", rawKey, std::string("W ") + c10::toString(src.scalar_type()) + ", module "
                                                         + c10::toString(it->second.scalar_type()) + ": converted"});
            torch::NoGradGuard noGrad;
            it->second.copy_(src);
        }
        for (const auto& [key, _] : target) {
            if (!seen.contains(key))
                m_out.load.push_back({"missing", key, "in the module but not in W"});
        }
        for (const auto& name : outside)
            m_out.load.push_back({"missing", name, "a module tensor outside the model's state_dict prefix '" + m_in.statePrefix + "'"});
        m_out.loaded = std::none_of(m_out.load.begin(), m_out.load.end(), [](const LoadIssue& i) {
            return i.kind == "missing" || i.kind == "unexpected" || i.kind == "shape";
        });
        return m_out.loaded;
    }

    static std::string shapeText(at::IntArrayRef s)
    {
        std::string out = "[";
        for (std::size_t i = 0; i < s.size(); ++i)
            out += (i ? ", " : "") + std::to_string(s[i]);
        return out + "]";
    }

    void collectParameters()
    {
        m_params.clear();
        m_buffers.clear();
        m_order.clear();
        for (const auto& p : m_module.named_parameters(true)) {
            if (p.name.starts_with(m_in.statePrefix)) {
                m_params.emplace(p.name.substr(m_in.statePrefix.size()), p.value);
                m_order.push_back(p.value);
            }
        }
        for (const auto& b : m_module.named_buffers(true)) {
            if (b.name.starts_with(m_in.statePrefix))
                m_buffers.emplace(b.name.substr(m_in.statePrefix.size()), b.value);
        }
    }

    at::Tensor param(const std::string& name)
    {
        const auto it = m_params.find(name);
        if (it == m_params.end())
            throw std::runtime_error("the optimizer's parameter '" + name + "' is not a parameter of the module");
        return it->second;
    }

    at::Tensor moment(const ParamOptimizerState& s, const char* key)
    {
        const auto it = s.moments.find(key);
        return it == s.moments.end() ? at::Tensor() : toTorch(it->second).to(m_device);
    }

    // torch.optim's update, replayed with its own formulas (torch_optimizers.cpp) for the classes
    // it covers; any other class (or an unsupported option) leaves the update at forward/backward.
    void buildOptimizer()
    {
        const std::string& type = m_in.optimizerType;
        if (!TorchOptimUpdate::replays(type)) {
            m_out.optimizerMode = "forward/backward only: " + (type.empty() ? std::string("the optimizer's class is unknown")
                                                                             : type + " is not among the optimizers replayed")
                                + " (Adam, AdamW, SGD, RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta)";
            return;
        }
        auto rules = std::make_unique<TorchOptimUpdate>(type, m_in.torchVersion);
        m_groups = m_in.groups;
        for (const auto& g : m_in.groups) {
            if (const std::string why = rules->unsupported(g); !why.empty()) {
                m_out.optimizerMode = "forward/backward only: " + why;
                return;
            }
            for (const auto& name : g.params)
                param(name); // every name is a parameter of the module, or the replay says which is not
        }
        for (const auto& [name, s] : m_in.optimizerState) {
            const at::Tensor p = param(name);
            TorchParamState st;
            st.step = s.step ? std::optional<double>(static_cast<double>(*s.step)) : std::nullopt;
            for (const auto& [key, host] : s.moments) {
                at::Tensor t = toTorch(host).to(m_device);
                // 0-d entries (NAdam's mu_product) stay as torch keeps them; moments take the parameter's shape
                if (t.dim() > 0 && t.sizes() != p.sizes())
                    throw std::runtime_error("the checkpoint's optimizer state '" + key + "' of '" + name + "' has shape "
                                             + shapeText(t.sizes()) + ", the parameter " + shapeText(p.sizes())
                                             + ": the optimizer's entries are matched to the wrong parameters");
                st.tensors.emplace(key, std::move(t));
            }
            m_state.emplace(name, std::move(st));
        }
        m_rules = std::move(rules);
        m_out.optimizerFormulas = m_rules->formulas();
        m_out.optimizerMode = "step";
    }

    void readOptimizerState(std::map<std::string, std::map<std::string, TensorDigest>>& moments,
                            std::map<std::string, int64_t>& steps)
    {
        for (const auto& [name, st] : m_state) {
            if (st.step)
                steps[name] = static_cast<int64_t>(std::llround(*st.step));
            for (const auto& [key, t] : st.tensors)
                moments[name][key] = digest(t);
        }
    }

    // optimizer.step(): each group's parameters that have a gradient, in the group's order; a
    // parameter without state gets the state torch creates on its first step.
    void optimizerStep()
    {
        for (const auto& g : m_groups) {
            for (const auto& name : g.params) {
                at::Tensor p = param(name);
                if (!p.grad().defined())
                    continue;
                auto [it, fresh] = m_state.try_emplace(name);
                if (fresh || (it->second.tensors.empty() && m_in.optimizerType != "SGD"))
                    m_rules->initialise(g, p, it->second);
                m_rules->update(g, p, p.grad(), it->second);
            }
        }
    }

    static void setGenerator(const at::Generator& constGen, const std::vector<std::byte>& bytes)
    {
        at::Generator gen = constGen; // a handle to the same generator
        auto state = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
        std::memcpy(state.data_ptr(), bytes.data(), bytes.size());
        std::lock_guard<std::mutex> lock(gen.mutex());
        gen.set_state(state);
    }

    static std::vector<std::byte> generatorState(const at::Generator& constGen)
    {
        at::Generator gen = constGen;
        std::lock_guard<std::mutex> lock(gen.mutex());
        return bytesOf(gen.get_state());
    }

    // The saved CUDA state (seed and philox offset) goes back in whole; a LibTorch whose state layout
    // differs from the saving torch's (816 vs 16 bytes) gets the seed alone, and the report says so.
    void restoreCudaGenerator(int rank)
    {
        const auto cg = m_in.cudaGenerator.find(rank);
        if (cg == m_in.cudaGenerator.end())
            return;
        at::Generator gen = at::globalContext().defaultGenerator(m_device);
        try {
            setGenerator(gen, cg->second);
        } catch (const c10::Error& e) {
            const auto seed = m_in.cudaSeed.find(rank);
            if (seed != m_in.cudaSeed.end()) {
                std::lock_guard<std::mutex> lock(gen.mutex());
                gen.set_current_seed(seed->second);
            }
            m_out.notes.push_back("rank " + std::to_string(rank) + ": this LibTorch does not accept the saved CUDA generator "
                                  "state (" + std::to_string(cg->second.size()) + " bytes): "
                                  + (seed != m_in.cudaSeed.end() ? "its seed was restored, its offset was not" : "not restored"));
        }
    }

    // Each micro-batch draws from its rank's generators as they stand after the previous one (and,
    // from the second update on, as the previous update left them).
    void forwardBackward(const UpdateInput& u, UpdateResult& r)
    {
        for (auto& [_, p] : m_params)
            p.mutable_grad() = at::Tensor();
        const at::Generator& cpu = at::detail::getDefaultCPUGenerator();
        if (m_scaler) {
            r.scale = m_scaler->scale;
            r.growthTrackerBefore = m_scaler->growthTracker;
        }
        for (const auto& mb : u.microBatches) {
            const auto gen = m_cpuNow.find(mb.rank);
            if (gen != m_cpuNow.end())
                setGenerator(cpu, gen->second);
            if (m_device.is_cuda()) {
                const auto now = m_cudaNow.find(mb.rank);
                if (now != m_cudaNow.end())
                    setGenerator(at::globalContext().defaultGenerator(m_device), now->second);
                else
                    restoreCudaGenerator(mb.rank);
            }
            std::vector<c10::IValue> args;
            std::vector<TensorDigest> digests;
            for (const auto& h : mb.inputs) {
                const at::Tensor t = toTorch(h);
                digests.push_back(digest(t));
                args.emplace_back(t.to(m_device));
            }
            r.inputs.push_back(std::move(digests));
            const c10::IValue value = m_in.method == "forward" ? m_module.forward(args) : m_module.get_method(m_in.method)(args);
            if (!value.isTensor() || value.toTensor().numel() != 1)
                throw std::runtime_error("the module's " + m_in.method + "() must return the loss as a one-element tensor");
            at::Tensor loss = value.toTensor();
            r.losses.push_back(loss.item<double>());
            at::Tensor scaled = loss / u.gradDivisor;
            if (m_scaler)
                scaled = scaled * m_scaler->scale;
            scaled.backward();
            if (gen != m_cpuNow.end())
                m_cpuNow[mb.rank] = generatorState(cpu);
            if (m_device.is_cuda())
                m_cudaNow[mb.rank] = generatorState(at::globalContext().defaultGenerator(m_device));
        }
    }

    void finishUpdate(const UpdateInput& u, UpdateResult& r)
    {
        // model.parameters() order, as the loop's clip_grad_norm_(model.parameters(), ...) sees them
        std::vector<at::Tensor> params;
        for (auto& p : m_order) {
            if (p.grad().defined())
                params.push_back(p);
        }
        if (m_scaler) { // GradScaler.unscale_: grads times the float32 reciprocal of the scale
            const at::Tensor inv = torch::full({}, m_scaler->scale, torch::kDouble).reciprocal().to(torch::kFloat).to(m_device);
            for (auto& p : params) {
                p.mutable_grad().mul_(inv.to(p.grad().scalar_type()));
                r.foundInf = r.foundInf || !torch::isfinite(p.grad()).all().item<bool>();
            }
        }
        if (!params.empty()) {
            const at::Tensor total = totalNorm(params);
            r.gradNorm = total.item<double>();
            if (u.maxGradNorm && !r.foundInf)
                clipGradients(params, total, *u.maxGradNorm);
        }
        if (m_scaler)
            updateScale(r.foundInf);
        if (!m_rules || r.foundInf)
            return;
        optimizerStep();
        r.stepped = true;
    }

    // GradScaler.update(): halve (backoff) on inf/nan and reset the tracker; otherwise count clean
    // steps and grow after growth_interval of them (torch/cuda/amp/grad_scaler.py, _amp_update_scale_).
    void updateScale(bool foundInf)
    {
        ScalerInput& s = *m_scaler;
        if (foundInf) {
            s.scale *= s.backoffFactor;
            s.growthTracker = 0;
        } else if (++s.growthTracker == s.growthInterval) {
            s.scale *= s.growthFactor;
            s.growthTracker = 0;
        }
    }

    // torch.nn.utils.clip_grad_norm_'s total 2-norm: each gradient's norm, stacked in parameter order,
    // then the norm of the stack (Debian torch 1.13, torch/nn/utils/clip_grad.py clip_grad_norm_).
    static at::Tensor totalNorm(const std::vector<at::Tensor>& params)
    {
        std::vector<at::Tensor> norms;
        for (const auto& p : params)
            norms.push_back(at::norm(p.grad().detach(), 2));
        return at::norm(at::stack(norms), 2);
    }

    // clip_coef = max_norm / (total_norm + 1e-6) is Python's float / tensor, i.e.
    // (total_norm + 1e-6).reciprocal() * max_norm (Debian torch 1.13, torch/_tensor.py __rdiv__), clamped to 1 and
    // multiplied into every gradient. LibTorch's C++ clip_grad_norm_ divides instead and rounds differently.
    static void clipGradients(const std::vector<at::Tensor>& params, const at::Tensor& total, double maxNorm)
    {
        const at::Tensor coef = (total + 1e-6).reciprocal() * maxNorm;
        const at::Tensor clamped = at::clamp(coef, c10::nullopt, 1.0);
        for (const auto& p : params)
            p.grad().detach().mul_(clamped.to(p.grad().device()));
    }

    const ReplayInput& m_in;
    const ReplayProgress& m_progress;
    ReplayResult m_out;
    c10::Device m_device{c10::kCPU};
    torch::jit::Module m_module;
    std::map<std::string, at::Tensor> m_params, m_buffers;
    std::vector<at::Tensor> m_order; // the module's parameters in its own order
    std::vector<OptimizerGroup> m_groups; // the optimizer's groups, their lr set per update
    std::map<int, std::vector<std::byte>> m_cpuNow, m_cudaNow; // each rank's generators as the replay advances them
    std::optional<ScalerInput> m_scaler;
    std::unique_ptr<TorchOptimUpdate> m_rules;
    std::map<std::string, TorchParamState> m_state; // optimizer state by parameter name
};

} // namespace

std::string libtorchVersion()
{
    return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "."
         + std::to_string(TORCH_VERSION_PATCH);
}

ReplayResult replayUpdate(const ReplayInput& input, const ReplayProgress& progress)
{
    try {
        return Replay(input, progress).run();
    } catch (const c10::Error& e) {
        throw std::runtime_error(std::string("LibTorch: ") + e.what_without_backtrace());
    }
}

} // namespace ckpt::validate
