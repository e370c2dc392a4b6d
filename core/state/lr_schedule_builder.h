// SPDX-License-Identifier: MIT
// The reader of a scheduler's state_dict, shared by lr_schedule.cpp (recognition, the common keys,
// torch's formula schedulers, composites) and lr_schedule_kinds.cpp (OneCycleLR, CyclicLR, lambdas,
// and the frameworks' own schedulers). Internal to core/state.
#pragma once

#include "ckpt/state/lr_schedule.h"
#include "lr_schedule_values.h"

#include <optional>
#include <string>
#include <string_view>

namespace ckpt {
namespace detail {
constexpr int kMaxNesting = 8;        // SequentialLR inside SequentialLR...: a hostile cycle stops here
constexpr int kMaxSchedulers = 1000;  // and a hostile fan-out (a list holding the same dict many times)
} // namespace detail

// The graph readers the builder's methods use (lr_schedule_values.h), in both of its files.
using detail::attributeOf;
using detail::closeTo;
using detail::display;
using detail::formatNumber;
using detail::formatNumbers;
using detail::integerOf;
using detail::isDict;
using detail::isSequence;
using detail::numberOf;
using detail::numbersOf;

// LrSchedule's friend: it sets the schedule's private parameters.
struct LrScheduleBuilder {
    const ValueGraph& g;
    NodeId optimizerState;
    int budget = detail::kMaxSchedulers;

    bool has(NodeId sd, std::string_view key) const { return g.get(sd, key) != kNoNode; }
    void notRecomputable(LrSchedule& s, const std::string& why)
    {
        if (s.recomputable || s.why.empty())
            s.why = why;
        s.recomputable = false;
    }

    std::optional<LrSchedule> read(NodeId sd, int depth);
    void readCommon(LrSchedule& s, NodeId sd);
    void listFields(LrSchedule& s, NodeId sd);
    // A required number; records why not when absent or not a number.
    std::optional<double> need(LrSchedule& s, NodeId sd, const char* key);
    std::optional<int64_t> needInt(LrSchedule& s, NodeId sd, const char* key);
    void readFormula(LrSchedule& s, NodeId sd);
    void readComposite(LrSchedule& s, NodeId sd, int depth);

    // lr_schedule_kinds.cpp
    void readMegatron(LrSchedule& s, NodeId sd);
    void readOneCycle(LrSchedule& s, NodeId sd);
    void readCyclic(LrSchedule& s, NodeId sd);
    void readDeepSpeed(LrSchedule& s, NodeId sd);
    bool readTransformersLambda(LrSchedule& s, NodeId sd, NodeId lambdas);
    void readLambdas(LrSchedule& s, NodeId sd);
};

} // namespace ckpt
