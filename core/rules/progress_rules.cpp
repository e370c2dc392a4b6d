// SPDX-License-Identifier: MIT
// Control counters C_t (recovery guide §6.1: every part of a checkpoint belongs to one logical
// commit point): the global step and epoch agree wherever they are recorded, with the directory
// name, and with a framework's own loop counters.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

#include <map>
#include <set>

namespace ckpt::rules {
namespace {

void countersDisagree(const TrainingState& s, Findings& out)
{
    for (const char* name : {"global_step", "global_steps", "iteration", "epoch"}) {
        const auto fields = findFields(s.progress, name);
        std::set<double> values;
        for (const StateField* f : fields) {
            if (auto v = toNumber(f->value))
                values.insert(*v);
        }
        if (values.size() < 2)
            continue;
        Finding f = makeFinding("progress.counters-disagree",
            std::string("files of this checkpoint record different ") + name + " values",
            hintWithNext("The files were written at different boundaries (an asynchronous save that let training move on, "
                         "recovery guide §8.1 on save frequency) or mixed from two saves; they cannot describe one training moment (recovery guide §6.1 on consistent checkpoints).", Component::Progress));
        for (const StateField* field : fields)
            f.evidence.push_back(evidence(*field));
        out.push_back(std::move(f));
    }
    const StateField* recorded = nullptr;
    for (const char* name : {"global_step", "global_steps", "iteration"}) {
        if ((recorded = findField(s.progress, name)))
            break;
    }
    if (!recorded || !s.layout.stepFromName || toNumber(recorded->value) == static_cast<double>(*s.layout.stepFromName))
        return;
    Finding f = makeFinding("progress.counters-disagree",
        "the checkpoint is named for step " + std::to_string(*s.layout.stepFromName) + " but records " + recorded->name + " "
            + recorded->value,
        hintWithNext("The name and the counter come from different moments: the counter was incremented during the save "
                     "(story Lightning#11555) or the folder was renamed/copied (recovery guide §6.1 on consistent checkpoints and §8.3 on retention and rollback).", Component::Progress));
    f.severity = Severity::Warning;
    f.evidence.push_back({"step in the name", std::to_string(*s.layout.stepFromName), s.layout.path});
    f.evidence.push_back(evidence(*recorded));
    out.push_back(std::move(f));
}

// Lightning's fit loop keeps ready/completed (and processed) counts for optimizer steps and
// batches; at a save they agree with each other and with global_step.
void loopCounters(const TrainingState& s, Findings& out)
{
    std::map<std::string, const StateField*> byName;
    for (const auto* fields : {&s.progress, &s.data}) {
        for (const auto& f : *fields) {
            if (f.name.starts_with("fit_loop/"))
                byName[f.name] = &f;
        }
    }
    auto compare = [&](const std::string& prefix, const char* a, const char* b) {
        const auto ia = byName.find(prefix + a), ib = byName.find(prefix + b);
        if (ia == byName.end() || ib == byName.end() || ia->second->value == ib->second->value)
            return;
        Finding f = makeFinding("progress.loop-counters",
            "Lightning's " + prefix + a + " is " + ia->second->value + " but " + b + " is " + ib->second->value,
            hintWithNext("The checkpoint was written between two counter updates (story Lightning#19815: saved before "
                         "increment_completed, so the last batch runs again after the resume) (recovery guide §6.1 on consistent checkpoints).", Component::Progress));
        f.evidence.push_back(evidence(*ia->second));
        f.evidence.push_back(evidence(*ib->second));
        out.push_back(std::move(f));
    };
    for (const auto& [name, field] : byName) {
        const auto cut = name.rfind("/total/ready");
        if (cut == std::string::npos || name.find("epoch_progress") != std::string::npos)
            continue;
        const std::string prefix = name.substr(0, cut) + "/total/";
        compare(prefix, "ready", "completed");
        compare(prefix, "processed", "completed");
    }
    const StateField* global = findField(s.progress, "global_step");
    for (const auto& [name, field] : byName) {
        if (!global || !name.ends_with("optim_progress/optimizer/step/total/completed") || field->value == global->value)
            continue;
        Finding f = makeFinding("progress.loop-counters",
            "Lightning counted " + field->value + " completed optimizer steps but global_step is " + global->value,
            hintWithNext("global_step was incremented (or not) during the save (stories Lightning#11555, #19403) (recovery guide §6.1 on consistent checkpoints).",
                         Component::Progress));
        f.evidence.push_back(evidence(*field));
        f.evidence.push_back(evidence(*global));
        out.push_back(std::move(f));
    }
}

} // namespace

void progressRules(const CheckpointFacts& c, Findings& out)
{
    countersDisagree(c.state, out);
    loopCounters(c.state, out);
}

} // namespace ckpt::rules
