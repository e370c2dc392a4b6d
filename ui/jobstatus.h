// SPDX-License-Identifier: MIT
// The status bar's background-job indicator: what is running, a progress bar and a Cancel button,
// all hidden while nothing runs.
#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;
class QToolButton;

class JobStatus final : public QWidget {
    Q_OBJECT
public:
    explicit JobStatus(QWidget* parent = nullptr);

    void setProgress(int done, int total, const QString& what);
    void finish();

    QProgressBar* bar() const { return m_bar; }
    QToolButton* cancelButton() const { return m_cancel; }

signals:
    void cancelRequested();

private:
    QLabel* m_label;
    QProgressBar* m_bar;
    QToolButton* m_cancel;
};
