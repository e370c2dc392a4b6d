// SPDX-License-Identifier: MIT
// The resume-validation panel: runs ckpt-validate on the current checkpoint as a separate process
// (QProcess), locally or through the launcher prefix kept in settings ("ssh gpu01 --", "srun
// --gres=gpu:1 --time=10 --"), streams its JSON-lines progress, can cancel it, and shows the final
// report (verdict per component in the guide's diagnosis order) next to the checkpoint. The
// validator runs in its own process so that a LibTorch crash or a hung cluster job never takes the
// application down; nothing is ever written beside the user's checkpoint.
#pragma once

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QWidget>

class QTreeWidgetItem;

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTimer;
class QTreeWidget;

class ValidationPanel final : public QWidget {
    Q_OBJECT
public:
    enum class State { Idle, Running, Passed, Partial, Differs, CannotRun, Crashed, Cancelled };
    Q_ENUM(State)

    explicit ValidationPanel(QWidget* parent = nullptr);
    /// Kills a validator still running (it is a child process: it must not outlive the panel).
    ~ValidationPanel() override;

    /// The checkpoint to validate; shows its last report of this session, if any.
    void setCheckpoint(const QString& path);
    QString checkpoint() const { return m_checkpoint; }

    /// ckpt-validate's path; default: beside the application (or $CKPT_VALIDATE).
    void setValidatorPath(const QString& path) { m_validator = path; }
    QString validatorPath() const { return m_validator; }

    /// The launcher prefix, saved in QSettings under "validation/launcher"; "" runs locally.
    void setLauncher(const QString& prefix);
    QString launcher() const;
    void setDevice(const QString& device); // auto, cpu, cuda, cuda:N
    void setProbe(const QString& probe);   // "" -> the checkpoint's default probe

    State state() const { return m_state; }
    bool isRunning() const { return m_state == State::Running; }
    /// The last report event ({"event": "report", ...}); empty before one arrived.
    QJsonObject report() const { return m_report; }
    /// The command line of the last run, as a shell would read it (for the log and bug reports).
    QString commandLine() const { return m_commandLine; }

    void start();
    void cancel();

Q_SIGNALS:
    void progressed(int index, int of, const QString& message);
    /// The run ended: `state` says how (a crash, a cancel, or the validator's verdict).
    void finished(ValidationPanel::State state);

private:
    void readOutput();
    void handleEvent(const QJsonObject& event);
    void processFinished(int exitCode, QProcess::ExitStatus status);
    void processError(QProcess::ProcessError error);
    void finish(State state, const QString& message);
    void showReport(const QJsonObject& report);
    void addComponents(QTreeWidgetItem* parent, const QJsonArray& components); // parent null: top level
    void updateButtons();

    QString m_checkpoint, m_validator, m_commandLine;
    QProcess* m_process = nullptr;
    QTimer* m_killTimer = nullptr;
    QByteArray m_pending; // a partial line
    QJsonObject m_report;
    QHash<QString, QJsonObject> m_reports; // this session's reports, by checkpoint
    State m_state = State::Idle;
    bool m_cancelled = false;

    QLineEdit *m_probeEdit = nullptr, *m_launcherEdit = nullptr;
    QComboBox* m_deviceBox = nullptr;
    QPushButton *m_runButton = nullptr, *m_cancelButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_verdict = nullptr;
    QTreeWidget* m_components = nullptr;
    QPlainTextEdit* m_log = nullptr;
};
