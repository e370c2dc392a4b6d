// SPDX-License-Identifier: MIT
// What a transformers Trainer checkpoint keeps of its LR schedule outside scheduler.pt.
#include "state_reader.h"

#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/state/lr_schedule.h"
#include "ckpt/state/state_values.h"
#include "lr_schedule_values.h"
#include "state_structure.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ckpt::detail {

namespace {

// The text of an enum member pickled from training_args (SchedulerType, an ExplicitEnum of str): its
// constructor argument, the member's value or name; lower case either way ("linear").
std::string enumText(const ValueGraph& g, NodeId n)
{
    if (!g.valid(n))
        return {};
    if (g[n].kind == Kind::String)
        return g[n].text;
    if (g[n].kind != Kind::Object || !g.valid(g[n].a))
        return {};
    const NodeId args = g[n].a; // one argument, or the tuple of them
    const NodeId arg = g[args].kind == Kind::String ? args : g[args].items.empty() ? kNoNode : g[args].items.front();
    if (!g.valid(arg) || g[arg].kind != Kind::String)
        return {};
    std::string text = g[arg].text;
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

} // namespace

// transformers' Trainer builds its schedule with get_scheduler(args.lr_scheduler_type, optimizer,
// num_warmup_steps=args.get_warmup_steps(max_steps), num_training_steps=max_steps), a LambdaLR over a
// functools.partial whose arguments are not in scheduler.pt (transformers@c26b2a29e500
// src/transformers/trainer.py create_scheduler, training_args.py get_warmup_steps: warmup_steps when
// > 0, else ceil(max_steps × warmup_ratio)). The type and warmup are in training_args.bin, max_steps in
// trainer_state.json: given to the schedule reader, the Trainer's schedule becomes recomputable, so a
// resume that rebuilt it with another max_steps shows against the logged LR.
void StateReader::readTransformersSchedule()
{
    if (!conventionsOf(m_state.layout.layout).lambdaScheduleFromTrainingArgs || !m_state.scheduler || m_state.scheduler->schedule.kind != "LambdaLR")
        return;
    const Opened *scheduler = nullptr, *args = nullptr;
    for (const auto& f : m_files) {
        if (f.info.path == m_state.scheduler->from.file && m_state.scheduler->from.key.empty())
            scheduler = &f;
        if (f.info.role == "training_args")
            args = &f;
    }
    const StateField* maxSteps = m_state.progressField("max_steps");
    if (!scheduler || !args || !maxSteps)
        return;
    const ValueGraph& ag = args->file->graph();
    const NodeId argsRoot = args->file->root();
    const NodeId fields = ag[argsRoot].kind == Kind::Object ? ag[argsRoot].state : argsRoot;
    const std::string type = enumText(ag, ag.get(fields, "lr_scheduler_type"));
    const auto warmupSteps = integerOf(ag, ag.get(fields, "warmup_steps"));
    const auto warmupRatio = scalarOf(*args->file, ag.get(fields, "warmup_ratio"));
    int64_t total = 0;
    try {
        total = std::stoll(maxSteps->value);
    } catch (const std::exception&) {
        return;
    }
    if (type.empty() || !warmupSteps || total <= 0)
        return;
    const auto warmup = *warmupSteps > 0 ? *warmupSteps : static_cast<int64_t>(std::ceil(static_cast<double>(total) * warmupRatio.value_or(0)));

    ValueGraph copy;
    const ValueGraph& sg = scheduler->file->graph();
    const NodeId dict = copyValue(sg, scheduler->file->root(), copy);
    if (copy[dict].kind != Kind::Dict)
        return;
    auto add = [&](const char* key, NodeId value) {
        copy[dict].items.push_back(copy.addText(Kind::String, key));
        copy[dict].items.push_back(value);
    };
    add("transformers.lr_scheduler_type", copy.addText(Kind::String, type));
    add("transformers.warmup_steps", copy.addInt(warmup));
    add("transformers.max_steps", copy.addInt(total));
    if (auto schedule = readLrSchedule(copy, dict); schedule && schedule->recomputable)
        m_state.scheduler->schedule = std::move(*schedule);
}

} // namespace ckpt::detail
