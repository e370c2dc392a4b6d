// SPDX-License-Identifier: MIT
#include "ui/validationpanel.h"

#include "ckpt/io/launcher.h"
#include "ui/copyaction.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace {

const QString kLauncherKey = QStringLiteral("validation/launcher");

QString defaultValidator()
{
    const QByteArray env = qgetenv("CKPT_VALIDATE");
    if (!env.isEmpty())
        return QString::fromLocal8Bit(env);
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("ckpt-validate"));
}

QString verdictText(const QJsonValue& v)
{
    return v.toString(QStringLiteral("?"));
}

} // namespace

ValidationPanel::ValidationPanel(QWidget* parent)
    : QWidget(parent)
    , m_validator(defaultValidator())
{
    m_probeEdit = new QLineEdit(this);
    m_probeEdit->setPlaceholderText(tr("default: probes/after-<checkpoint> beside it"));
    m_launcherEdit = new QLineEdit(QSettings().value(kLauncherKey).toString(), this);
    m_launcherEdit->setPlaceholderText(tr("run locally, or e.g. ssh gpu01 --   srun --gres=gpu:1 --time=10 --"));
    connect(m_launcherEdit, &QLineEdit::editingFinished, this, [this] { setLauncher(m_launcherEdit->text()); });
    m_deviceBox = new QComboBox(this);
    m_deviceBox->setEditable(true);
    m_deviceBox->addItems({QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda"), QStringLiteral("cuda:0")});

    auto* form = new QFormLayout;
    form->addRow(tr("Probe:"), m_probeEdit);
    form->addRow(tr("Launcher:"), m_launcherEdit);
    form->addRow(tr("Device:"), m_deviceBox);

    m_runButton = new QPushButton(tr("Validate resume"), this);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    connect(m_runButton, &QPushButton::clicked, this, &ValidationPanel::start);
    connect(m_cancelButton, &QPushButton::clicked, this, &ValidationPanel::cancel);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 7);
    m_progress->setValue(0);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_runButton);
    buttons->addWidget(m_cancelButton);
    buttons->addWidget(m_progress, 1);

    m_verdict = new QLabel(this);
    m_verdict->setWordWrap(true);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_components = new QTreeWidget(this);
    m_components->setColumnCount(3);
    m_components->setHeaderLabels({tr("Component / check"), tr("Verdict"), tr("Detail")});
    m_components->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_components->setSelectionMode(QAbstractItemView::ExtendedSelection);
    installCopyAction(m_components);
    m_log = new QPlainTextEdit(this);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(2000);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_components);
    splitter->addWidget(m_log);
    splitter->setStretchFactor(0, 3);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(m_verdict);
    layout->addWidget(splitter, 1);

    m_killTimer = new QTimer(this);
    m_killTimer->setSingleShot(true);
    connect(m_killTimer, &QTimer::timeout, this, [this] {
        if (m_process)
            m_process->kill(); // it ignored SIGTERM
    });
    updateButtons();
}

ValidationPanel::~ValidationPanel()
{
    if (m_process) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

void ValidationPanel::setCheckpoint(const QString& path)
{
    m_checkpoint = path;
    if (!isRunning()) {
        m_report = m_reports.value(path);
        showReport(m_report);
    }
    updateButtons();
}

void ValidationPanel::setLauncher(const QString& prefix)
{
    if (m_launcherEdit->text() != prefix)
        m_launcherEdit->setText(prefix);
    QSettings().setValue(kLauncherKey, prefix.trimmed());
}

QString ValidationPanel::launcher() const
{
    return m_launcherEdit->text().trimmed();
}

void ValidationPanel::setDevice(const QString& device)
{
    m_deviceBox->setCurrentText(device);
}

void ValidationPanel::setProbe(const QString& probe)
{
    m_probeEdit->setText(probe);
}

void ValidationPanel::start()
{
    if (isRunning() || m_checkpoint.isEmpty())
        return;
    std::vector<std::string> args = {m_checkpoint.toStdString(), "--device", m_deviceBox->currentText().toStdString()};
    if (!m_probeEdit->text().isEmpty()) {
        args.push_back("--probe");
        args.push_back(m_probeEdit->text().toStdString());
    }
    std::vector<std::string> argv;
    try {
        argv = ckpt::launchCommand(launcher().toStdString(), m_validator.toStdString(), args);
    } catch (const ckpt::LauncherError& e) {
        m_log->appendPlainText(tr("Launcher: %1").arg(QString::fromStdString(e.what())));
        finish(State::CannotRun, tr("The launcher cannot be split into words: %1").arg(QString::fromStdString(e.what())));
        return;
    }
    setLauncher(launcher());
    m_commandLine = QString::fromStdString(ckpt::quoteCommandLine(argv));
    QStringList qargs;
    for (std::size_t i = 1; i < argv.size(); ++i)
        qargs << QString::fromStdString(argv[i]);

    m_report = {};
    m_pending.clear();
    m_cancelled = false;
    m_components->clear();
    m_log->clear();
    m_log->appendPlainText(m_commandLine);
    m_progress->setValue(0);
    m_verdict->setText(tr("Running…"));
    m_state = State::Running;

    m_process = new QProcess(this);
    m_process->setProcessChannelMode(QProcess::SeparateChannels);
    connect(m_process, &QProcess::readyReadStandardOutput, this, &ValidationPanel::readOutput);
    connect(m_process, &QProcess::readyReadStandardError, this, [this] {
        m_log->appendPlainText(QString::fromLocal8Bit(m_process->readAllStandardError()).trimmed());
    });
    connect(m_process, &QProcess::finished, this, &ValidationPanel::processFinished);
    connect(m_process, &QProcess::errorOccurred, this, &ValidationPanel::processError);
    updateButtons();
    m_process->start(QString::fromStdString(argv[0]), qargs);
}

void ValidationPanel::cancel()
{
    if (!m_process || !isRunning())
        return;
    m_cancelled = true;
    m_log->appendPlainText(tr("Cancelling…"));
    m_process->terminate(); // srun and ssh pass SIGTERM on to the remote job
    m_killTimer->start(3000);
}

void ValidationPanel::readOutput()
{
    m_pending += m_process->readAllStandardOutput();
    qsizetype nl;
    while ((nl = m_pending.indexOf('\n')) >= 0) {
        const QByteArray line = m_pending.left(nl).trimmed();
        m_pending.remove(0, nl + 1);
        if (line.isEmpty())
            continue;
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
        if (doc.isObject())
            handleEvent(doc.object());
        else
            m_log->appendPlainText(QString::fromUtf8(line)); // the launcher's own output (banners, srun notices)
    }
}

void ValidationPanel::handleEvent(const QJsonObject& event)
{
    const QString kind = event.value(QStringLiteral("event")).toString();
    if (kind == QLatin1String("progress")) {
        const int index = event.value(QStringLiteral("index")).toInt();
        const int of = event.value(QStringLiteral("of")).toInt(7);
        const QString message = event.value(QStringLiteral("message")).toString();
        m_progress->setRange(0, of);
        m_progress->setValue(std::max(m_progress->value(), index));
        m_log->appendPlainText(QStringLiteral("[%1/%2] %3").arg(index).arg(of).arg(message));
        Q_EMIT progressed(index, of, message);
    } else if (kind == QLatin1String("report")) {
        m_report = event;
        m_reports.insert(m_checkpoint, event);
        showReport(event);
    }
}

void ValidationPanel::processFinished(int exitCode, QProcess::ExitStatus status)
{
    readOutput();
    m_killTimer->stop();
    if (m_cancelled)
        finish(State::Cancelled, tr("Cancelled."));
    else if (status == QProcess::CrashExit)
        finish(State::Crashed, tr("The validator crashed (%1). The application is unaffected; see the log.")
                                   .arg(m_process->errorString()));
    else if (m_report.isEmpty())
        finish(State::CannotRun, tr("The validator ended with exit code %1 without a report; see the log.").arg(exitCode));
    else
        finish(exitCode == 0 ? State::Passed : exitCode == 1 ? State::Differs : exitCode == 3 ? State::Partial : State::CannotRun, {});
}

void ValidationPanel::processError(QProcess::ProcessError error)
{
    if (error != QProcess::FailedToStart)
        return; // crashes and the like arrive through finished()
    m_killTimer->stop();
    finish(State::CannotRun, tr("Cannot start %1: %2").arg(m_commandLine, m_process->errorString()));
}

void ValidationPanel::finish(State state, const QString& message)
{
    m_state = state;
    if (m_process) {
        m_process->disconnect(this);
        m_process->deleteLater();
        m_process = nullptr;
    }
    if (!message.isEmpty()) {
        m_verdict->setText(message);
        m_log->appendPlainText(message);
    }
    updateButtons();
    Q_EMIT finished(state);
}

void ValidationPanel::showReport(const QJsonObject& report)
{
    m_components->clear();
    if (report.isEmpty()) {
        m_verdict->clear();
        return;
    }
    QString text = tr("Verdict: %1").arg(verdictText(report.value(QStringLiteral("verdict"))));
    if (report.value(QStringLiteral("first_difference")).isString())
        text += tr(" — first difference: %1").arg(report.value(QStringLiteral("first_difference")).toString());
    const QJsonArray gaps = report.value(QStringLiteral("not_compared")).toArray();
    if (report.value(QStringLiteral("verdict")).toString() == QLatin1String("partial") && !gaps.isEmpty()) {
        const QJsonObject g = gaps.first().toObject();
        text += tr(" — not compared: %1 %2 (%3)")
                    .arg(g.value(QStringLiteral("component")).toString(), g.value(QStringLiteral("check")).toString(),
                         g.value(QStringLiteral("why")).toString());
        if (gaps.size() > 1)
            text += tr(", and %n more", nullptr, int(gaps.size() - 1));
    }
    if (report.contains(QStringLiteral("error")))
        text += QStringLiteral("\n") + report.value(QStringLiteral("error")).toString();
    if (report.contains(QStringLiteral("device")))
        text += tr("\nReplayed on %1 (LibTorch %2)")
                    .arg(report.value(QStringLiteral("device")).toString(), report.value(QStringLiteral("validator_libtorch")).toString());
    m_verdict->setText(text);
    addComponents(nullptr, report.value(QStringLiteral("components")).toArray());
    // probe(updates=K): updates 2..K below update 1's components, each with its own
    for (const QJsonValue& uv : report.value(QStringLiteral("updates")).toArray()) {
        const QJsonObject u = uv.toObject();
        const QString first = u.value(QStringLiteral("first_difference")).toString();
        auto* item = new QTreeWidgetItem(m_components, {tr("update %1").arg(u.value(QStringLiteral("update")).toInt()),
                                                        first.isEmpty() ? tr("matches") : tr("differs: %1").arg(first),
                                                        tr("the replay continued from its own previous update")});
        addComponents(item, u.value(QStringLiteral("components")).toArray());
        item->setExpanded(!first.isEmpty());
    }
    const QJsonArray load = report.value(QStringLiteral("load")).toArray();
    if (!load.isEmpty()) {
        auto* item = new QTreeWidgetItem(m_components, {tr("W load"), QString(), tr("key/shape/dtype report")});
        for (const QJsonValue& lv : load) {
            const QJsonObject l = lv.toObject();
            new QTreeWidgetItem(item, {l.value(QStringLiteral("key")).toString(), l.value(QStringLiteral("kind")).toString(),
                                       l.value(QStringLiteral("detail")).toString()});
        }
        item->setExpanded(true);
    }
}

void ValidationPanel::addComponents(QTreeWidgetItem* parent, const QJsonArray& components)
{
    for (const QJsonValue& cv : components) {
        const QJsonObject c = cv.toObject();
        const QStringList columns = {c.value(QStringLiteral("name")).toString(), verdictText(c.value(QStringLiteral("verdict"))),
                                     c.value(QStringLiteral("title")).toString()};
        auto* item = parent ? new QTreeWidgetItem(parent, columns) : new QTreeWidgetItem(m_components, columns);
        const QJsonArray checks = c.value(QStringLiteral("checks")).toArray();
        for (const QJsonValue& chv : checks) {
            const QJsonObject ch = chv.toObject();
            new QTreeWidgetItem(item, {ch.value(QStringLiteral("name")).toString(), verdictText(ch.value(QStringLiteral("verdict"))),
                                       ch.value(QStringLiteral("detail")).toString()});
        }
        item->setExpanded(c.value(QStringLiteral("verdict")).toString() != QLatin1String("exact"));
    }
}

void ValidationPanel::updateButtons()
{
    m_runButton->setEnabled(!isRunning() && !m_checkpoint.isEmpty());
    m_cancelButton->setEnabled(isRunning());
}
