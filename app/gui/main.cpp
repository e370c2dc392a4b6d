// SPDX-License-Identifier: MIT
// checkpoint-inspector [PATH...] [--tab NAME] [--screenshot FILE]
#include "checkpoint_inspector_version.h"

#include "ui/mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>
#include <cstring>

namespace {

// Screenshots, --help and --version need no display: render offscreen unless told otherwise.
bool wantsOffscreen(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        for (const char* option : {"--screenshot", "--help", "--version", "-h", "-v"}) {
            if (std::strncmp(argv[i], option, std::strlen(option)) == 0)
                return true;
        }
    }
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    if (wantsOffscreen(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("checkpoint-inspector"));
    QApplication::setOrganizationName(QStringLiteral("checkpoint-inspector"));
    QApplication::setApplicationVersion(QStringLiteral(CKPT_GUI_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate("main", "Inspect PyTorch checkpoints without Python."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("paths"), QApplication::translate("main", "Checkpoint files or folders to open."),
                                 QStringLiteral("[PATH...]"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QApplication::translate("main", "Render the window to a PNG once everything has loaded, then exit."),
                                        QStringLiteral("FILE"));
    const QCommandLineOption tab(QStringLiteral("tab"),
                                 QApplication::translate("main", "Select a tab: %1.").arg(MainWindow::tabNames().join(QStringLiteral(", "))),
                                 QStringLiteral("NAME"));
    parser.addOptions({screenshot, tab});
    parser.process(app);

    const bool screenshotMode = parser.isSet(screenshot);
    MainWindow window(screenshotMode ? MainWindow::Settings::Ignore : MainWindow::Settings::Use);
    if (parser.isSet(tab) && !window.selectTab(parser.value(tab))) {
        std::fprintf(stderr, "checkpoint-inspector: unknown tab '%s' (choose from %s)\n", qPrintable(parser.value(tab)),
                     qPrintable(MainWindow::tabNames().join(QStringLiteral(", "))));
        return 2;
    }
    window.show();

    if (screenshotMode) {
        const QString file = parser.value(screenshot);
        auto shoot = [&window, file] {
            if (!window.grab().save(file, "PNG")) {
                std::fprintf(stderr, "checkpoint-inspector: cannot write %s\n", qPrintable(file));
                QCoreApplication::exit(1);
                return;
            }
            QCoreApplication::exit(0);
        };
        // Queued, so the last results are laid out before the grab.
        QObject::connect(&window, &MainWindow::loadsFinished, &window, [&window, shoot] { QTimer::singleShot(0, &window, shoot); });
        if (parser.positionalArguments().isEmpty())
            QTimer::singleShot(0, &window, shoot);
    }
    if (!parser.positionalArguments().isEmpty())
        window.openPaths(parser.positionalArguments());
    return QApplication::exec();
}
