// SPDX-License-Identifier: MIT
// Integrity (recovery guide §6.2-6.3, §7.2): what the manifest audit found, files the state
// model could not read, and optimizer tensors that share bytes with each other or with the
// model's parameters (one in-place update would then change both).
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

namespace ckpt::rules {
namespace {

// ["optimizer", "state", 0, "exp_avg"] or ["state", "3", "momentum_buffer"]: an optimizer moment.
bool isOptimizerTensor(const KeyPath& key)
{
    for (std::size_t i = 0; i + 2 < key.size(); ++i) {
        if (key[i] == KeyPart(std::string("state")))
            return true;
    }
    return false;
}

void unreadableFiles(const CheckpointFacts& c, Findings& out)
{
    for (const auto& w : c.state.warnings) {
        for (const auto& file : c.state.layout.files) {
            if (!w.starts_with(file.path + ": "))
                continue;
            bool audited = false;
            for (const auto& a : c.audit)
                audited = audited || (a.rule == "integrity.file-unreadable" && a.file == file.path);
            if (audited)
                break;
            Finding f = makeFinding("integrity.file-unreadable", w,
                hintWithNext("A truncated or damaged file, or a format this reader does not know; the state it holds "
                             "(" + file.role + ") is missing from every other check (recovery guide §6.3 on what a manifest records).", Component::Integrity));
            f.file = file.path;
            f.evidence.push_back({"error", w.substr(file.path.size() + 2), file.path});
            out.push_back(std::move(f));
            break;
        }
    }
}

void sharedStorage(const CheckpointFacts& c, Findings& out)
{
    for (const auto& file : c.files) {
        for (const auto& share : file.shared) {
            const bool a = isOptimizerTensor(share.a), b = isOptimizerTensor(share.b);
            if (!a && !b)
                continue; // parameters sharing storage: tied weights or views, as saved by state_dict()
            Finding f = makeFinding("integrity.shared-storage",
                formatKeyPath(share.a) + " and " + formatKeyPath(share.b) + " share the same bytes",
                hintWithNext("Optimizer state aliasing another tensor: a moment created with torch.empty_like on a shared "
                             "buffer, state copied by reference between parameters, or a converter that deduplicated "
                             "equal tensors. One update then changes both (recovery guide §2.2 on optimizer state and §6.1 on consistent checkpoints).", Component::Integrity));
            f.file = file.path;
            f.evidence.push_back({"tensor", formatKeyPath(share.a), file.path + ": " + formatKeyPath(share.a)});
            f.evidence.push_back({"tensor", formatKeyPath(share.b), file.path + ": " + formatKeyPath(share.b)});
            out.push_back(std::move(f));
        }
    }
}

// A layout's own commit marker missing (DCP's .metadata, Megatron-core's metadata.json, NeMo's
// -unfinished marker present): the save did not finish. The recovery guide's COMPLETE is the audit's.
void incompleteSave(const CheckpointFacts& c, Findings& out)
{
    const CheckpointLayout& layout = c.state.layout;
    if (layout.complete || std::any_of(c.audit.begin(), c.audit.end(), [](const Finding& a) { return a.rule == "integrity.no-complete-marker"; }))
        return;
    Finding f = makeFinding("integrity.no-complete-marker", layout.path + ": " + layout.incompleteReason,
        hintWithNext("A save that died midway leaves some ranks' files or the metadata unwritten; resume from the newest "
                     "complete checkpoint (recovery guide §6.2 on atomic writes and commit markers).", Component::Integrity));
    f.evidence.push_back({"layout", layoutName(layout.layout), layout.path});
    out.push_back(std::move(f));
}

} // namespace

void integrityRules(const CheckpointFacts& c, Findings& out)
{
    out.insert(out.end(), c.audit.begin(), c.audit.end());
    incompleteSave(c, out);
    unreadableFiles(c, out);
    sharedStorage(c, out);
}

} // namespace ckpt::rules
