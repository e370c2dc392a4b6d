// SPDX-License-Identifier: MIT
// Control counters C_t (recovery guide §6.1: every part of a checkpoint belongs to one logical
// commit point): the global step and epoch agree wherever they are recorded, with the directory
// name, and with a framework's own loop counters.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
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
    f.assumes = "the checkpoint's name carries the step it was saved at";
    f.evidence.push_back({"step in the name", std::to_string(*s.layout.stepFromName), s.layout.path});
    f.evidence.push_back(evidence(*recorded));
    out.push_back(std::move(f));
}

// Lightning's major.minor from pytorch-lightning_version ("2.4.0", "2.5.0rc0"); nullopt when absent.
std::optional<std::pair<int, int>> lightningVersion(const TrainingState& s)
{
    const StateField* v = findField(s.environment, "pytorch-lightning_version");
    int major = 0, minor = 0;
    if (!v || std::sscanf(v->value.c_str(), "%d.%d", &major, &minor) != 2)
        return std::nullopt;
    return std::pair{major, minor};
}

// Lightning's fit loop keeps ready/started/processed/completed counts for batches and optimizer
// steps. Within one training batch (Lightning@7f0c3436 src/lightning/pytorch/loops/
// training_epoch_loop.py advance(), the same order in 1.9.5): ready, started, the optimizer step,
// processed, the on_train_batch_end hooks, completed. ModelCheckpoint(every_n_train_steps) saves in
// on_train_batch_end, so a healthy step checkpoint has ready == started == processed ==
// completed + 1 for the batch progress, its optimizer step already counted in global_step
// (docs/conventions.md §4). Lightning 2.5 (9358898c, #20379) recognises that shape on restore and
// counts the batch as completed; earlier versions reset the counters to `completed` and run that
// batch again (story Lightning#19815). Which version resumes is not in the files.
void loopCounters(const TrainingState& s, Findings& out)
{
    std::map<std::string, const StateField*> byName;
    for (const auto* fields : {&s.progress, &s.data}) {
        for (const auto& f : *fields) {
            if (f.name.starts_with("fit_loop/"))
                byName[f.name] = &f;
        }
    }
    auto value = [&](const std::string& name) -> std::optional<double> {
        const auto it = byName.find(name);
        return it == byName.end() ? std::nullopt : toNumber(it->second->value);
    };
    const auto version = lightningVersion(s);
    const std::string versionText = version ? std::to_string(version->first) + "." + std::to_string(version->second) : "unknown";
    for (const auto& [name, field] : byName) {
        const auto cut = name.rfind("/total/ready");
        if (cut == std::string::npos || name.find("epoch_progress") != std::string::npos)
            continue;
        const std::string prefix = name.substr(0, cut) + "/total/";
        const auto ready = value(prefix + "ready"), started = value(prefix + "started"),
                   processed = value(prefix + "processed"), completed = value(prefix + "completed");
        if (!ready || !completed)
            continue;
        const bool agree = *ready == *completed && (!processed || *processed == *completed)
                        && (!started || *started == *completed);
        if (agree)
            continue;
        // A restore resets only the `current` trackers (ready = completed); `total` keeps the saved
        // batch's ready, and the batch's second run adds one more (Lightning@862314360457
        // src/lightning/pytorch/loops/progress.py _StartedTracker.reset_on_restart,
        // training_epoch_loop.py reset). After k restores from batch-end saves, a healthy batch-end
        // save has total ready = completed + 1 + k, while `current` keeps the batch-end shape.
        const double gap = *ready - *completed;
        // `path` copies the structured binding: clang before 16 cannot capture one (the fuzz preset).
        auto currentIsBatchEnd = [&, path = name] {
            const std::string cur = path.substr(0, cut) + "/current/";
            const auto cr = value(cur + "ready"), cs = value(cur + "started"), cp = value(cur + "processed"), cc = value(cur + "completed");
            return cr && cc && (*cr == *cc || *cr == *cc + 1) && (!cs || *cs == *cr) && (!cp || *cp == *cr);
        };
        const bool batchEnd = name.find("batch_progress") != std::string::npos && gap >= 1 && gap == std::floor(gap)
                           && (!started || *started == *ready) && (!processed || *processed == *ready)
                           && (gap == 1 || currentIsBatchEnd());
        const auto rerun = static_cast<int64_t>(gap) - 1; // batches run a second time after earlier restores
        const std::string tracker = prefix.substr(0, prefix.size() - 1);
        const std::string counts = "ready " + numberText(*ready) + (started ? ", started " + numberText(*started) : "")
                                 + (processed ? ", processed " + numberText(*processed) : "") + ", completed "
                                 + numberText(*completed);
        if (batchEnd && rerun == 0 && version && (version->first > 2 || (version->first == 2 && version->second >= 5)))
            continue; // the writer's own restore compensates, and it is the version most likely to resume
        const std::string reruns = rerun > 0
            ? "; " + std::to_string(rerun) + " earlier restore(s) ran their saved batch a second time (the total trackers keep each "
                  "re-run's ready, the current ones were reset)"
            : std::string();
        Finding f = batchEnd
            ? makeFinding("progress.loop-counters",
                  "Lightning's " + tracker + " counters (" + counts + ") are those of a save in on_train_batch_end: the last batch "
                      "is trained and its optimizer step counted, but not yet marked completed" + reruns,
                  hintWithNext("Healthy as written. Resumed by Lightning 2.5 or later, the batch counts as completed; resumed by "
                               "an earlier version, that batch runs a second time (story Lightning#19815, "
                               "fixed by #20379 in 2.5) (recovery guide §6.1 on consistent checkpoints).", Component::Progress))
            : makeFinding("progress.loop-counters",
                  "Lightning's " + tracker + " counters (" + counts + ") were saved in the middle of a batch",
                  hintWithNext("A save between started and processed comes from a hook inside the batch (on_train_batch_start, "
                               "on_before_optimizer_step, a signal handler): the batch was not finished and runs again, or runs "
                               "half (stories Lightning#19815, #19367) (recovery guide §6.1 on consistent checkpoints).",
                               Component::Progress));
        if (batchEnd) {
            f.severity = Severity::Info;
            f.assumes = "which Lightning version resumes from it (the file was written by " + versionText + ")";
        } else {
            f.assumes = "Lightning's loop order: ready, started, optimizer step, processed, on_train_batch_end, completed";
        }
        for (const char* k : {"ready", "started", "processed", "completed"}) {
            if (const auto it = byName.find(prefix + k); it != byName.end())
                f.evidence.push_back(evidence(*it->second));
        }
        if (const StateField* v = findField(s.environment, "pytorch-lightning_version"))
            f.evidence.push_back(evidence(*v));
        out.push_back(std::move(f));
    }
    // global_step is optim_progress.optimizer.step.total.completed by construction under automatic
    // optimization (Lightning@7f0c3436 training_epoch_loop.py global_step); 1.x counted every
    // optimizer's steps, so a file with several optimizers is not judged.
    const StateField* global = findField(s.progress, "global_step");
    for (const auto& [name, field] : byName) {
        if (!global || !name.ends_with("optim_progress/optimizer/step/total/completed") || field->value == global->value)
            continue;
        Finding f = makeFinding("progress.loop-counters",
            "Lightning counted " + field->value + " completed optimizer steps but global_step is " + global->value,
            hintWithNext("global_step was incremented (or not) during the save (stories Lightning#11555, #19403) (recovery guide §6.1 on consistent checkpoints).",
                         Component::Progress));
        f.assumes = "automatic optimization with one optimizer (Lightning's global_step is then its completed steps)";
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
