// SPDX-License-Identifier: MIT
// The checkpoint view's "Schedule" tab: the learning rate rebuilt from the scheduler's state
// beside the LR the run logged, the loss on a second axis, the run's checkpoints as vertical
// lines (this one solid); zoom and pan, export to PNG or PDF.
#pragma once

#include <QWidget>

#include <memory>

namespace ckpt {
struct RunHistory;
struct TrainingState;
}
class CurvePlot;
class QCheckBox;
class QLabel;
class QPushButton;

class SchedulePage final : public QWidget {
    Q_OBJECT
public:
    explicit SchedulePage(QWidget* parent = nullptr);

    /// Draws `state`'s schedule; `run` (may be null) adds the logged series and the other
    /// checkpoints. Null `state` clears the page.
    void setCheckpoint(std::shared_ptr<const ckpt::TrainingState> state,
                       std::shared_ptr<const ckpt::RunHistory> run = nullptr);

    /// Saves the plot as PNG or PDF, chosen by the file name's suffix. Returns false with a
    /// reason in errorString() when it cannot.
    bool exportPlot(const QString& path);
    QString errorString() const { return m_error; }

    CurvePlot* plot() const { return m_plot; }
    QString infoText() const;

private:
    void exportWithDialog();

    CurvePlot* m_plot;
    QLabel* m_info;
    QCheckBox* m_log;
    QPushButton* m_fit;
    QPushButton* m_export;
    QString m_error;
};
