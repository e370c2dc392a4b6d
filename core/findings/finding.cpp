// SPDX-License-Identifier: MIT
#include "ckpt/findings/finding.h"

namespace ckpt {

const char* severityName(Severity severity)
{
    switch (severity) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
    }
    return "?";
}

const char* componentName(Component component)
{
    switch (component) {
    case Component::Model: return "model";
    case Component::Optimizer: return "optimizer";
    case Component::Scheduler: return "scheduler";
    case Component::Scaler: return "scaler";
    case Component::Rng: return "rng";
    case Component::Data: return "data";
    case Component::Progress: return "progress";
    case Component::Environment: return "environment";
    case Component::Integrity: return "integrity";
    case Component::Security: return "security";
    }
    return "?";
}

} // namespace ckpt
