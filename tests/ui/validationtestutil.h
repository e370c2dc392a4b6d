// SPDX-License-Identifier: MIT
// Shared by the validation panel's tests: run the panel to its end and return how it ended.
#pragma once

#include "ui/validationpanel.h"

#include <QSignalSpy>

namespace UiTest {

/// Starts `panel` and waits for its finished() (State::Running when it did not finish in time).
inline ValidationPanel::State runToEnd(ValidationPanel& panel, int timeoutMs = 120000)
{
    QSignalSpy done(&panel, &ValidationPanel::finished);
    panel.start();
    if (done.isEmpty() && !done.wait(timeoutMs))
        return ValidationPanel::State::Running;
    return done.at(0).at(0).value<ValidationPanel::State>();
}

} // namespace UiTest
