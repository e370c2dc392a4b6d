// SPDX-License-Identifier: MIT
// Shared by the ui tests: a headless test main, real checkpoints from Debian's PyTorch, and a
// printable dump of any item model for golden comparisons.
#pragma once

#include <algorithm>
#include <vector>

#include <QAbstractItemModel>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>
#include <QtTest>

#ifndef CKPT_TEST_PYTHON
#error "CKPT_TEST_PYTHON must name the Python that has torch (tests/ui/CMakeLists.txt sets it)"
#endif

/// QTEST_MAIN that also runs headless when started by hand (ctest sets the variable too).
#define CKPT_UI_TEST_MAIN(TestObject)                                                                                  \
    int main(int argc, char** argv)                                                                                    \
    {                                                                                                                  \
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))                                                            \
            qputenv("QT_QPA_PLATFORM", "offscreen");                                                                   \
        QApplication app(argc, argv);                                                                                  \
        app.setAttribute(Qt::AA_Use96Dpi, true);                                                                       \
        TestObject tc;                                                                                                 \
        QTEST_SET_MAIN_SOURCE_PATH                                                                                     \
        return QTest::qExec(&tc, argc, argv);                                                                          \
    }

namespace UiTest {

/// Runs tests/fixtures/make_checkpoints.py into `outDir` (about 2 s). Returns an error message, or
/// an empty string on success.
inline QString generateCheckpoints(const QString& outDir)
{
    QProcess python;
    python.setProcessChannelMode(QProcess::MergedChannels);
    python.start(QStringLiteral(CKPT_TEST_PYTHON), {QStringLiteral(CKPT_MAKE_CHECKPOINTS), outDir});
    if (!python.waitForFinished(120000) || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
        return QStringLiteral("%1 %2 failed (needs python3-torch, see packaging/install-deps.sh): %3")
            .arg(QStringLiteral(CKPT_TEST_PYTHON), QStringLiteral(CKPT_MAKE_CHECKPOINTS),
                 QString::fromLocal8Bit(python.readAll()) + python.errorString());
    }
    return {};
}

/// Runs tests/fixtures/make_hostile.py into `outDir`: broken and malicious inputs that are
/// never executed. Returns an error message, or an empty string on success.
inline QString generateHostile(const QString& outDir)
{
    QProcess python;
    python.setProcessChannelMode(QProcess::MergedChannels);
    python.start(QStringLiteral(CKPT_TEST_PYTHON), {QStringLiteral(CKPT_MAKE_HOSTILE), outDir});
    if (!python.waitForFinished(120000) || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0)
        return QString::fromLocal8Bit(python.readAll()) + python.errorString();
    return {};
}

/// Runs a Python snippet with the test Python (argv[1] = `arg`).
inline QString runPython(const QString& code, const QString& arg)
{
    QProcess python;
    python.setProcessChannelMode(QProcess::MergedChannels);
    python.start(QStringLiteral(CKPT_TEST_PYTHON), {QStringLiteral("-c"), code, arg});
    if (!python.waitForFinished(60000) || python.exitCode() != 0)
        return QString::fromLocal8Bit(python.readAll()) + python.errorString();
    return {};
}

inline bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

inline QJsonObject readJson(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

/// One line per row, indented two spaces per level, cells joined by " | "; expands everything.
inline void dumpModel(const QAbstractItemModel& model, const QModelIndex& parent, int depth, QStringList& out)
{
    for (int row = 0; row < model.rowCount(parent); ++row) {
        QStringList cells;
        for (int column = 0; column < model.columnCount(parent); ++column)
            cells.append(model.index(row, column, parent).data().toString());
        out.append(QString(depth * 2, QLatin1Char(' ')) + cells.join(QStringLiteral(" | ")));
        const QModelIndex child = model.index(row, 0, parent);
        if (model.hasChildren(child))
            dumpModel(model, child, depth + 1, out);
    }
}

inline QStringList dumpModel(const QAbstractItemModel& model)
{
    QStringList out;
    dumpModel(model, {}, 0, out);
    return out;
}

/// Compares line by line so a failure names the first differing line.
/// Delivers everything the event queue holds, and what that delivery posts in turn (a
/// QFutureWatcher's callout, then its finished signal), so that after a worker pool has drained
/// every result it produced has either arrived or been dropped: an ordering, not a sleep.
inline void deliverPostedEvents()
{
    for (int round = 0; round < 8; ++round) {
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents(QEventLoop::AllEvents);
    }
}

/// The lines that differ, as a diff: "-expected", "+actual", and "  " for two lines of context
/// around each change (a longest common subsequence, fine for dumps of a few hundred lines).
inline QString lineDiff(const QStringList& expected, const QStringList& actual)
{
    const qsizetype n = expected.size(), m = actual.size();
    std::vector<std::vector<int>> lcs(static_cast<std::size_t>(n + 1), std::vector<int>(static_cast<std::size_t>(m + 1), 0));
    for (qsizetype i = n - 1; i >= 0; --i)
        for (qsizetype j = m - 1; j >= 0; --j)
            lcs[i][j] = expected[i] == actual[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    QStringList ops; // each "  x", "-x" or "+x"
    qsizetype i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && expected[i] == actual[j]) {
            ops << QStringLiteral("  ") + expected[i++];
            ++j;
        } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
            ops << QStringLiteral("+ ") + actual[j++];
        } else {
            ops << QStringLiteral("- ") + expected[i++];
        }
    }
    QStringList out;
    for (qsizetype k = 0; k < ops.size(); ++k) {
        bool near = false;
        for (qsizetype d = -2; d <= 2 && !near; ++d)
            near = k + d >= 0 && k + d < ops.size() && !ops[k + d].startsWith(QStringLiteral("  "));
        if (near)
            out << ops[k];
        else if (!out.isEmpty() && out.last() != QStringLiteral("  ..."))
            out << QStringLiteral("  ...");
    }
    return out.join(QLatin1Char('\n'));
}

inline bool compareLines(const QStringList& actual, const QStringList& expected)
{
    if (actual != expected)
        qWarning().noquote() << "expected (-) and actual (+) differ:\n" << lineDiff(expected, actual);
    const qsizetype n = qMin(actual.size(), expected.size());
    for (qsizetype i = 0; i < n; ++i) {
        if (actual[i] != expected[i]) {
            qWarning().noquote() << "line" << i << "\n  actual:  " << actual[i] << "\n  expected:" << expected[i];
            qWarning().noquote() << "full dump:\n" << actual.join(QLatin1Char('\n'));
            return false;
        }
    }
    if (actual.size() != expected.size()) {
        qWarning().noquote() << "line counts differ:" << actual.size() << "vs" << expected.size() << "\nfull dump:\n"
                             << actual.join(QLatin1Char('\n'));
        return false;
    }
    return true;
}

} // namespace UiTest
