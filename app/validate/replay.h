// SPDX-License-Identifier: MIT
// The one update replayed with LibTorch, described in plain C++ so that only torch_replay.cpp
// includes torch headers: what goes in (tensors as bytes read by the core's safe reader, the
// optimizer's groups and state, generator states) and what comes out (digests, losses, norms,
// generator states after). The probe's TorchScript module is the one file LibTorch opens.
#pragma once

#include "ckpt/dtypes/dtype.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::validate {

/// A tensor's elements, contiguous and little-endian, as the core read them from a file.
struct HostTensor {
    DType dtype = DType::Unknown;
    std::vector<int64_t> shape;
    std::vector<std::byte> bytes;
};

/// sum and L2 norm in float64, SHA-256 of the row-major little-endian bytes (ckpt_writer.tensor_digest).
struct TensorDigest {
    std::string dtype;
    std::vector<int64_t> shape;
    double sum = 0, l2 = 0;
    std::string sha256;
};

struct OptimizerGroup {
    std::vector<std::string> params;          // parameter names (the model's state_dict keys)
    std::map<std::string, double> hyper;      // lr, eps, weight_decay, momentum, dampening, beta1, beta2, alpha, rho, ...
    std::map<std::string, bool> flags;        // amsgrad, nesterov, maximize, centered, foreach, fused, capturable, ...
};

struct ParamOptimizerState {
    std::optional<int64_t> step;
    std::map<std::string, HostTensor> moments; // torch.optim's tensors by key: exp_avg, exp_avg_sq, momentum_buffer, sum, ...
};

struct MicroBatch {
    int rank = 0;
    std::vector<HostTensor> inputs;
};

/// One recorded update to replay: its micro-batches and how their gradients combine.
struct UpdateInput {
    std::vector<MicroBatch> microBatches;
    double gradDivisor = 1;
    std::optional<double> maxGradNorm;
    std::vector<double> lr;                   // per param group; empty: the groups' own lr
};

/// torch.cuda.amp.GradScaler's bookkeeping, carried from update to update (torch/amp/grad_scaler.py
/// update(): backoff on inf/nan, growth after growth_interval clean steps).
struct ScalerInput {
    double scale = 1;
    double growthFactor = 2, backoffFactor = 0.5;
    int64_t growthInterval = 2000, growthTracker = 0;
};

struct ReplayInput {
    std::string modulePath;     // the probe's TorchScript module
    std::string method;         // "training_loss" or "forward"
    std::string statePrefix;    // where the model's state_dict sits inside the module ("model.")
    std::map<std::string, HostTensor> weights; // W, by state_dict key
    std::vector<UpdateInput> updates;          // the consecutive updates the probe recorded
    std::optional<ScalerInput> scaler;         // the loss scaling to apply (power-of-two scales: exact)
    std::string optimizerType;                // a torch.optim class name; one not replayed: forward/backward only
    std::string torchVersion;                 // the probe's torch.__version__: whose formulas the update follows
    std::vector<OptimizerGroup> groups;
    std::map<std::string, ParamOptimizerState> optimizerState;
    std::map<int, std::vector<std::byte>> cpuGenerator;  // rank -> torch CPU generator state bytes
    std::map<int, std::vector<std::byte>> cudaGenerator; // rank -> torch CUDA generator state bytes
    std::map<int, uint64_t> cudaSeed;                    // rank -> its CUDA generator's seed (fallback)
    std::string device = "auto";              // auto | cpu | cuda | cuda:N
    int threads = 0;                          // CPU intra-op threads (0: LibTorch's default)
};

/// One entry of the W load report (strict: anything but "dtype" stops the replay).
struct LoadIssue {
    std::string kind; // "missing" (in the module, not in W), "unexpected" (in W, not in the module), "shape", "dtype", "prefix"
    std::string key;
    std::string detail;
};

/// What one replayed update did.
struct UpdateResult {
    bool stepped = false;
    std::vector<double> losses;            // per micro-batch, before division
    std::optional<double> gradNorm;        // total norm before clipping
    std::optional<double> scale;           // the loss scale applied
    int64_t growthTrackerBefore = 0;       // the scaler's growth tracker when the update began
    bool foundInf = false;                 // the scaled gradients held inf/nan: the step was skipped
    std::vector<std::vector<TensorDigest>> inputs;  // per micro-batch, as handed to the module
    std::map<std::string, TensorDigest> paramsBefore, paramsAfter;
    std::map<std::string, std::map<std::string, TensorDigest>> momentsBefore, momentsAfter;
    std::map<std::string, int64_t> stepBefore, stepAfter;
    std::map<int, std::vector<std::byte>> cpuGeneratorBefore, cpuGeneratorAfter; // rank -> state
};

struct ReplayResult {
    std::string device;                    // the device the updates ran on
    std::string torchVersion;              // this LibTorch
    bool cudaAvailable = false;
    std::vector<LoadIssue> load;
    bool loaded = false;
    std::string optimizerMode;             // "step" or "forward/backward only: <why>"
    std::string optimizerFormulas;         // "torch 1.13 for-loop formulas of AdamW"
    std::vector<UpdateResult> updates;
    std::vector<std::string> notes;
};

using ReplayProgress = std::function<void(const std::string& stage, const std::string& message)>;

/// Loads the module, applies W strictly, restores the optimizer and the generators and runs the
/// recorded updates one after the other (forward/backward of each micro-batch, unscale, clip, step). Throws std::runtime_error (with a message a user can act on) when it cannot
/// run; a strict-load failure returns with loaded == false and the issues listed.
ReplayResult replayUpdate(const ReplayInput& input, const ReplayProgress& progress);

/// The LibTorch version this validator was built with, e.g. "1.13.0".
std::string libtorchVersion();

} // namespace ckpt::validate
