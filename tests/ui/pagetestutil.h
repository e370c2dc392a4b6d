// SPDX-License-Identifier: MIT
// Shared by the data-page tests: the real sample runs, their training states, golden dumps kept
// in tests/ui/expected/ (CKPT_UPDATE_EXPECTED=1 rewrites them; read the diff before committing),
// and a grab of a page to PNG for looking at it.
#pragma once

#include "uitestutil.h"

#include "ckpt/state/run_history.h"
#include "ckpt/state/training_state.h"

#include <QWidget>

#include <memory>

#ifndef CKPT_SAMPLE_RUNS
#error "CKPT_SAMPLE_RUNS must name the repository's sample_runs folder (tests/ui/CMakeLists.txt)"
#endif

namespace PageTest {

inline QString sampleRun(const QString& relative)
{
    return QStringLiteral(CKPT_SAMPLE_RUNS "/") + relative;
}

inline std::shared_ptr<const ckpt::TrainingState> state(const QString& relative)
{
    return std::make_shared<const ckpt::TrainingState>(ckpt::readTrainingState(sampleRun(relative).toStdString()));
}

inline std::shared_ptr<const ckpt::RunHistory> run(const QString& relative)
{
    return std::make_shared<const ckpt::RunHistory>(ckpt::readRunHistory(sampleRun(relative).toStdString()));
}

/// Compares `actual` with tests/ui/expected/<name>.txt line by line.
inline bool matchesExpected(const QStringList& actual, const QString& name)
{
    const QString path = QStringLiteral(CKPT_EXPECTED_DIR "/") + name + QStringLiteral(".txt");
    QStringList expected;
    QFile file(path);
    const bool present = file.open(QIODevice::ReadOnly);
    if (present) {
        expected = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
        if (!expected.isEmpty() && expected.last().isEmpty())
            expected.removeLast();
        file.close();
    }
    // Rewriting a golden is a decision (tests/README.md says when it is legitimate): the change is
    // printed as a diff in the test log, never taken silently.
    if (qEnvironmentVariableIsSet("CKPT_UPDATE_EXPECTED")) {
        if (expected != actual)
            qWarning().noquote() << "CKPT_UPDATE_EXPECTED: rewriting" << path << (present ? "" : "(new)") << "with this change:\n"
                                 << UiTest::lineDiff(expected, actual);
        UiTest::writeFile(path, (actual.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8());
        return true;
    }
    if (!present) {
        qWarning().noquote() << "no expected dump" << path << "; actual:\n" << actual.join(QLatin1Char('\n'));
        return false;
    }
    return UiTest::compareLines(actual, expected);
}

/// With CKPT_GRAB_DIR set, saves the widget as <dir>/<name>.png (for looking at it by eye).
inline void grab(QWidget& widget, const QString& name)
{
    const QString dir = qEnvironmentVariable("CKPT_GRAB_DIR");
    if (dir.isEmpty())
        return;
    widget.resize(1200, 700);
    widget.show();
    QCoreApplication::processEvents();
    widget.grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

/// Every header of `model` with its tooltip: a statistic without an explanation fails.
inline bool everyHeaderHasTooltip(const QAbstractItemModel& model)
{
    for (int c = 0; c < model.columnCount(); ++c) {
        if (model.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty()) {
            qWarning() << "column" << c << model.headerData(c, Qt::Horizontal).toString() << "has no tooltip";
            return false;
        }
    }
    return true;
}

} // namespace PageTest
