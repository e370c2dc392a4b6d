// SPDX-License-Identifier: MIT
#include "ui/quietprogressbar.h"

void QuietProgressBar::setValueQuietly(int value)
{
    if (value == this->value())
        return;
    // repaint() does nothing while updates are off; turning them back on schedules update().
    const bool enabled = updatesEnabled();
    setUpdatesEnabled(false);
    setValue(value);
    setUpdatesEnabled(enabled);
}

void QuietProgressBar::setRangeQuietly(int minimum, int maximum)
{
    if (minimum == this->minimum() && maximum == this->maximum())
        return;
    const bool enabled = updatesEnabled();
    setUpdatesEnabled(false);
    setRange(minimum, maximum);
    setUpdatesEnabled(enabled);
}
