// SPDX-License-Identifier: MIT
// The report to attach to a bug (core/report/run_report.h) as one self-contained HTML file: the
// sections of `ckpt report`, with the timeline, the loss and LR, and the moment norms drawn by the
// app's own plots and embedded as PNG (data: URIs), so the file opens anywhere, offline.
#pragma once

#include "ckpt/report/run_report.h"

#include <QPalette>
#include <QString>

/// Renders on the calling thread (it draws plots: the GUI thread). Images are drawn in `palette`.
QString renderReportHtml(const ckpt::RunReport& report, const QPalette& palette);

/// Builds the report of `path` (reading and checking everything again: call it off the GUI thread)
/// and returns it; `cancelled` is polled. Throws std::runtime_error as buildRunReport does.
ckpt::RunReport buildReportForExport(const QString& path, const std::function<bool()>& keepGoing);
