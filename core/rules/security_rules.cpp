// SPDX-License-Identifier: MIT
// Security (recovery guide §11.2): globals a pickle references that can run code when torch.load
// unpickles it, and classes outside the known-safe list.
#include "ckpt/rules/rule_catalogue.h"
#include "rule_families.h"
#include "rule_support.h"

namespace ckpt::rules {

void securityRules(const CheckpointFacts& c, Findings& out)
{
    for (const auto& file : c.files) {
        std::vector<const ImportEntry*> dangerous, unknown;
        for (const auto& e : file.imports.entries) {
            if (e.safety == ImportSafety::Dangerous)
                dangerous.push_back(&e);
            else if (e.safety == ImportSafety::Unknown)
                unknown.push_back(&e);
        }
        if (!dangerous.empty() || file.imports.structuralDanger) {
            std::string list;
            for (std::size_t i = 0; i < dangerous.size() && i < 6; ++i)
                list += (i ? ", " : "") + dangerous[i]->path();
            Finding f = makeFinding("security.dangerous-import",
                "the pickle can run code when loaded with torch.load: " + (list.empty() ? std::string("suspicious structure") : list),
                "Never torch.load this file outside a sandbox; inspect it with `ckpt imports`. Checkpoints are code "
                "(recovery guide §11.2 on permissions and sensitive data): get it again from a trusted source. " + nextInDiagnosisOrder(Component::Security));
            f.file = file.path;
            for (const ImportEntry* e : dangerous)
                f.evidence.push_back({e->path(), e->reason, file.path + ": " + e->record});
            for (const auto& note : file.imports.notes)
                f.evidence.push_back({"note", note, file.path});
            out.push_back(std::move(f));
        }
        if (!unknown.empty()) {
            std::string list;
            for (std::size_t i = 0; i < unknown.size() && i < 6; ++i)
                list += (i ? ", " : "") + unknown[i]->path();
            Finding f = makeFinding("security.unknown-import",
                std::to_string(unknown.size()) + " class(es) outside the known-safe list: " + list,
                "torch.load(weights_only=True) refuses them; they are usually a framework's own classes. Check they come "
                "from code you trust (recovery guide §11.2 on permissions and sensitive data).");
            f.file = file.path;
            for (const ImportEntry* e : unknown)
                f.evidence.push_back({e->path(), e->reason, file.path + ": " + e->record});
            out.push_back(std::move(f));
        }
    }
}

} // namespace ckpt::rules
