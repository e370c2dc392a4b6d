// SPDX-License-Identifier: MIT
// A progress bar whose value changes are painted with the next regular update. QProgressBar's
// setValue() repaints at once, and a synchronous repaint flushes everything dirty in the whole
// window inside the caller's slot: a run's hundred "state read" results each paid for a full
// window paint on top of their own work.
#pragma once

#include <QProgressBar>

class QuietProgressBar final : public QProgressBar {
    Q_OBJECT
public:
    using QProgressBar::QProgressBar;

    void setValueQuietly(int value);
    /// setRange() resets (and repaints at once) when the value falls outside the new range.
    void setRangeQuietly(int minimum, int maximum);
};
