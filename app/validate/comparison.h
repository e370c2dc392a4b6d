// SPDX-License-Identifier: MIT
// Verdicts of the comparison with the probe: each check is exact, within tolerance or differs (or
// not compared, with the reason), with the measured difference; checks belong to components in
// the recovery guide's diagnosis order (§10.1): batch -> parameters -> optimizer step and LR ->
// scaler -> RNG -> numerics of the device.
#pragma once

#include "app/validate/replay.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ckpt::validate {

enum class Verdict { Exact, WithinTolerance, Differs, NotCompared };

const char* verdictName(Verdict v); // "exact", "within tolerance", "differs", "not compared"

struct Check {
    std::string name;
    Verdict verdict = Verdict::Exact;
    std::string detail;
    nlohmann::json measured = nlohmann::json::object();
    /// Not compared although the run has this part (an optimizer not replayed, a cursor the checkpoint
    /// lacks, random draws on another device): the validation is then partial, never a pass. Checks
    /// left out by design (a loss scale the run never applied) are not gaps.
    bool gap = false;
};

/// A check that could not be made although the run has the part: makes the verdict partial.
Check notCompared(const std::string& name, const std::string& why);

struct Component {
    std::string name;  // batch, parameters, optimizer, lr_scheduler, scaler, rng, numerics
    std::string title; // the guide's question
    std::vector<Check> checks;

    Verdict verdict() const; // the worst check; not compared when nothing was compared
};

/// Two numbers: exact when bitwise equal, within tolerance when |a-b| <= rtol * max(|a|, |b|).
Check compareNumber(const std::string& name, double replay, double probe, double rtol);

/// Two values that must be equal (counters, positions, fingerprints): exact or differs.
Check compareEqual(const std::string& name, const nlohmann::json& checkpoint, const nlohmann::json& probe,
                   const std::string& whatDiffers = {});

/// A set of tensors (parameters, moments) against the probe's digests {name: {"sum", "l2", "sha256", ...}}.
/// Bitwise-equal SHA-256: exact; same dtype and shape with |dL2| <= rtol*L2 and |dsum| <= rtol*L2*sqrt(n):
/// within tolerance; otherwise differs. One check for the whole set, listing the worst tensors.
Check compareDigests(const std::string& name, const std::map<std::string, TensorDigest>& replay,
                     const std::map<std::string, nlohmann::json>& probe, double rtol);

nlohmann::json toJson(const Component& c);

} // namespace ckpt::validate
