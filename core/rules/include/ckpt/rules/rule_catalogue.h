// SPDX-License-Identifier: MIT
// The rule catalogue: every rule `ckpt check` applies, in one list, with its stable id, the
// severity it usually reports, the component it concerns, the recovery-guide section it
// enforces and what it checks. Rules build their findings through makeFinding() so the id,
// component and default severity come from here and nowhere else.
#pragma once

#include "ckpt/findings/finding.h"

#include <string>
#include <string_view>
#include <vector>

namespace ckpt {

enum class RuleScope : uint8_t { Checkpoint, Pair, Run };

struct RuleInfo {
    std::string_view id;          // "optimizer.step-vs-global-step"
    Severity severity;            // the usual severity; a finding may report less (an explained case) or more
    Component component;
    RuleScope scope;
    std::string_view guide;       // recovery-guide section(s): "§2.2, §3.2"
    std::string_view description; // what it checks, one sentence
};

const char* scopeName(RuleScope scope); // "checkpoint", "pair", "run"

/// Every rule, grouped by component, in a stable order.
const std::vector<RuleInfo>& ruleCatalogue();

/// The rule with this id; throws std::logic_error for an id that is not in the catalogue (a bug).
const RuleInfo& ruleInfo(std::string_view id);

/// A finding of rule `id` with its catalogue component and default severity.
Finding makeFinding(std::string_view id, std::string message, std::string hint = {});

/// The convention a warning rule rests on (empty for error and info rules); makeFinding puts it in
/// Finding::assumes for findings of warning rules.
std::string_view ruleConvention(std::string_view id);

} // namespace ckpt
