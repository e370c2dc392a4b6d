// SPDX-License-Identifier: MIT
// torch.optim's update rules written with LibTorch tensor ops, op for op as the Python for-loop
// ("single tensor") implementations run them, so that a replay is bitwise equal to the run that
// recorded the probe where torch is deterministic. LibTorch's own C++ optimizers cover only Adam,
// AdamW, SGD, RMSprop, Adagrad and LBFGS, without `maximize`, and their arithmetic follows the
// Python code of the release they were cut from, not the release that wrote the checkpoint.
// Included only by the LibTorch translation units (torch_replay.cpp, torch_optimizers.cpp).
#pragma once

#include "app/validate/replay.h"

#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>

namespace ckpt::validate {

/// One parameter's optimizer state as torch.optim keeps it: the step count (a float32 tensor in
/// torch >= 1.12 for most optimizers, a Python int for some; kept here as the number it holds) and
/// the tensors, under torch.optim's own key names.
struct TorchParamState {
    std::optional<double> step;
    std::map<std::string, at::Tensor> tensors;
};

/// The optimizer classes replayed, with the torch release whose formulas are used.
class TorchOptimUpdate {
public:
    /// torchVersion: the probe's torch.__version__ ("1.13.0a0+git...", "2.5.1+cu121"); it picks the
    /// formulas of that release where they changed between releases.
    TorchOptimUpdate(std::string type, const std::string& torchVersion);

    /// torch.optim class names this replays: Adam, AdamW, SGD, RMSprop, Adagrad, Adamax, NAdam,
    /// RAdam, Adadelta.
    static bool replays(const std::string& type);

    /// Why a group cannot be replayed exactly (a hyperparameter combination with no formula here), or "".
    std::string unsupported(const OptimizerGroup& group) const;

    /// The state torch's step() creates for a parameter whose state is empty (its _init_group).
    void initialise(const OptimizerGroup& group, const at::Tensor& param, TorchParamState& state) const;

    /// One update of one parameter with its gradient, in place (param and state).
    void update(const OptimizerGroup& group, at::Tensor param, at::Tensor grad, TorchParamState& state) const;

    /// The formulas used, for the report ("torch 1.13 for-loop formulas").
    std::string formulas() const;

private:
    bool atLeast(int major, int minor) const { return m_major > major || (m_major == major && m_minor >= minor); }

    std::string m_type;
    int m_major = 1, m_minor = 13;
};

} // namespace ckpt::validate
