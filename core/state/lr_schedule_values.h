// SPDX-License-Identifier: MIT
// How the scheduler reader (lr_schedule.cpp) reads its pickled state, internal to core: numbers, lists
// and attributes out of the value graph, and values as Python-like text (lr_schedule_values.cpp).
#pragma once

#include "ckpt/pickle/value_graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::detail {

bool isDict(const ValueGraph& g, NodeId id);

/// A float, int or bool as a double; nullopt for anything else.
std::optional<double> numberOf(const ValueGraph& g, NodeId id);

/// An int, or a float holding an integer; nullopt for anything else.
std::optional<int64_t> integerOf(const ValueGraph& g, NodeId id);

/// A list or a tuple.
bool isSequence(const ValueGraph& g, NodeId id);

/// A list of numbers; nullopt when it is not one. `tensors` is set when some items are tensors
/// (torch's tensor learning rates), whose values are not in the pickle.
std::optional<std::vector<double>> numbersOf(const ValueGraph& g, NodeId id, bool* tensors = nullptr);

/// An attribute of a pickled object (its BUILD state) or an entry of a dict.
NodeId attributeOf(const ValueGraph& g, NodeId obj, std::string_view name);

/// A number as Python prints a float ("0.5", "1.0", "inf", "nan").
std::string formatNumber(double v);

/// "[a, b, ...]" of formatNumber.
std::string formatNumbers(const std::vector<double>& v);

/// A short Python-like rendering of a hyperparameter value.
std::string display(const ValueGraph& g, NodeId id, int depth = 0);

/// a and b agree to within `rel` of the larger magnitude.
bool closeTo(double a, double b, double rel);

} // namespace ckpt::detail
