// SPDX-License-Identifier: MIT
#include "rule_support.h"

#include <cstdlib>
#include <map>

namespace ckpt::rules {

std::string where(const Provenance& from)
{
    std::string text = from.key.empty() ? from.file : from.file + ": " + formatKeyPath(from.key);
    if (from.elements)
        text += " [" + std::to_string(from.elements->start) + ":" + std::to_string(from.elements->start + from.elements->numel) + "]";
    return text;
}

std::string where(const StateField& field) { return where(field.from); }

Evidence evidence(std::string what, std::string value, const Provenance& from)
{
    return {std::move(what), std::move(value), where(from)};
}

Evidence evidence(const StateField& field) { return {field.name, field.value, where(field.from)}; }

std::optional<double> toNumber(const std::string& text)
{
    if (text == "True" || text == "true")
        return 1.0;
    if (text == "False" || text == "false")
        return 0.0;
    if (text.empty())
        return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size())
        return std::nullopt;
    return v;
}

std::string shapeText(const std::vector<int64_t>& shape)
{
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

const StateField* findField(const std::vector<StateField>& fields, const std::string& name)
{
    for (const auto& f : fields) {
        if (f.name == name)
            return &f;
    }
    return nullptr;
}

std::vector<const StateField*> findFields(const std::vector<StateField>& fields, const std::string& name)
{
    std::vector<const StateField*> out;
    for (const auto& f : fields) {
        if (f.name == name)
            out.push_back(&f);
    }
    return out;
}

std::optional<double> fieldNumber(const std::vector<StateField>& fields, const std::string& name)
{
    for (const StateField* f : findFields(fields, name)) {
        if (auto v = toNumber(f->value))
            return v;
    }
    return std::nullopt;
}

std::optional<int64_t> worldSize(const TrainingState& state)
{
    for (const char* name : {"world_size", "dp_world_size"}) {
        if (auto v = fieldNumber(state.environment, name); v && *v >= 1)
            return static_cast<int64_t>(*v);
    }
    return std::nullopt;
}

int64_t gradientAccumulation(const TrainingState& state)
{
    for (const auto* fields : {&state.progress, &state.environment}) {
        if (auto v = fieldNumber(*fields, "gradient_accumulation_steps"); v && *v >= 1)
            return static_cast<int64_t>(*v);
    }
    return 1;
}

std::optional<Evidence> writerEvidence(const TrainingState& state)
{
    static const std::pair<const char*, const char*> kWriters[] = {
        {"pytorch-lightning_version", "Lightning"}, {"config.transformers_version", "transformers"},
        {"transformers_version", "transformers"}, {"ds_version", "DeepSpeed"}, {"nemo.nemo_version", "NeMo"}};
    for (const auto& [field, name] : kWriters) {
        if (const StateField* f = findField(state.environment, field))
            return Evidence{"written by", std::string(name) + " " + f->value, where(*f)};
    }
    return std::nullopt;
}

SchedulerCadence schedulerCadence(const TrainingState& state)
{
    SchedulerCadence c;
    c.perUpdate = {1};
    if (const int64_t a = gradientAccumulation(state); a > 1)
        c.perUpdate.push_back(a);
    // accelerate's AcceleratedScheduler steps the wrapped scheduler once per process for every
    // optimizer update unless split_batches (huggingface/accelerate@8d1479def0bb
    // src/accelerate/scheduler.py AcceleratedScheduler.step); split_batches is not saved, so both count.
    if (auto n = fieldNumber(state.environment, "accelerate.num_processes"); n && *n > 1)
        c.perUpdate.push_back(static_cast<int64_t>(*n));
    // Lightning saves each scheduler's state_dict but not its config: `interval` and `frequency`
    // decide when it steps ((batch_idx + 1) % frequency within the epoch for "step"), and neither is in
    // the file (Lightning@862314360457 src/lightning/pytorch/trainer/connectors/checkpoint_connector.py
    // dump_checkpoint, loops/training_epoch_loop.py update_lr_schedulers).
    if (findField(state.environment, "pytorch-lightning_version"))
        c.frequencyUnrecorded = "Lightning saves no lr_scheduler `interval` or `frequency`: a position short of the step is read as frequency 1";
    return c;
}

std::optional<OptimizerStep> optimizerStep(const TrainingState& state)
{
    if (!state.optimizer)
        return std::nullopt;
    std::map<int64_t, int> counts;
    std::map<int64_t, Provenance> firstFrom;
    for (const auto& ps : state.optimizer->paramState) {
        if (!ps.step)
            continue;
        const auto s = static_cast<int64_t>(*ps.step);
        ++counts[s];
        if (!firstFrom.contains(s)) {
            Provenance from = state.optimizer->from;
            from.key.insert(from.key.end(), {std::string("state"), ps.index, std::string("step")});
            firstFrom[s] = from;
        }
    }
    if (counts.empty())
        return std::nullopt;
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it) {
        if (it->second > best->second)
            best = it;
    }
    return OptimizerStep{best->first, firstFrom[best->first], counts.size() == 1};
}

const StateField* skippedStepsField(const TrainingState& state)
{
    const StateField* f = findField(state.progress, "skipped_steps");
    return f && toNumber(f->value) ? f : nullptr;
}

Evidence globalStepEvidence(const TrainingState& state)
{
    for (const char* name : {"global_step", "global_steps", "step", "iteration", "iter"}) {
        if (const StateField* f = findField(state.progress, name))
            return {"global step", f->value, where(*f)};
    }
    if (state.globalStep)
        return {"global step (from the directory name)", std::to_string(*state.globalStep), state.layout.path};
    return {"global step", "not recorded", state.path};
}

std::string nextInDiagnosisOrder(Component component)
{
    switch (component) {
    case Component::Data:
        return "Next (in the recovery guide's order for a loss jump after a resume, §10.1): compare the model parameter summary, then the optimizer step and LR.";
    case Component::Model:
    case Component::Integrity:
    case Component::Security:
        return "Next (in the recovery guide's order for a loss jump after a resume, §10.1): check the optimizer step and learning rate, then the scaler and RNG.";
    case Component::Optimizer:
    case Component::Scheduler:
    case Component::Progress:
        return "Next (in the recovery guide's order for a loss jump after a resume, §10.1): check the AMP scaler state, then the RNG states.";
    case Component::Scaler:
        return "Next (in the recovery guide's order for a loss jump after a resume, §10.1): check the RNG states and random operators.";
    case Component::Rng:
        return "Next (in the recovery guide's order for a loss jump after a resume, §10.1): look at distributed reduction order and hardware differences.";
    case Component::Environment:
        return "Next (in the recovery guide's order for a loss jump after a resume, §10.1): check that the next batch is the same, then the parameter summary.";
    }
    return {};
}

std::string hintWithNext(const std::string& cause, Component component)
{
    return cause + " " + nextInDiagnosisOrder(component);
}

} // namespace ckpt::rules
