// SPDX-License-Identifier: MIT
// The status bar's background-job indicator: what is running, one progress bar over every job
// and a Cancel button, all hidden while nothing runs. Jobs (reading runs, a checkpoint's tensor
// statistics, the optimizer's moments across the run) report under their own id, so one
// finishing does not hide another still running.
#pragma once

#include <QWidget>

#include <vector>

class QLabel;
class QuietProgressBar;
class QToolButton;

class JobStatus final : public QWidget {
    Q_OBJECT
public:
    explicit JobStatus(QWidget* parent = nullptr);

    /// Job `job` has done `done` of `total` units; `what` (when not empty) is what it says it does.
    void setProgress(const QString& job, int done, int total, const QString& what = {});
    void finish(const QString& job);
    /// Every job is over (or cancelled).
    void finishAll();

    QStringList jobs() const;
    QString text() const;
    QuietProgressBar* bar() const { return m_bar; }
    QToolButton* cancelButton() const { return m_cancel; }

signals:
    /// Cancel (or Esc) was pressed: the window stops every job.
    void cancelRequested();

private:
    struct Job {
        QString id;
        QString what;
        int done = 0;
        int total = 0;
    };
    void refresh();

    std::vector<Job> m_jobs; // in the order they started
    QLabel* m_label;
    QuietProgressBar* m_bar;
    QToolButton* m_cancel;
};
