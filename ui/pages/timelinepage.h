// SPDX-License-Identifier: MIT
// The Timeline tab: the run of the current checkpoint on one step axis (core/report/timeline.h).
// On top the logged loss with every checkpoint as a line coloured by its worst finding (labelled by
// step, latest and best marked, thinned or shortened so that no two labels overlap) and each resume
// point as a band; below, aligned on the same axis, one strip per
// part of S_t (LR, loss scale, optimizer step, data cursor, RNG changed, moment norm) with a red
// dashed line where a finding says it breaks. Clicking a band (or activating a row of the resume
// list) asks for the compare view of the checkpoints on both sides, with the first differing part.
#pragma once

#include "ui/plots/markerlabels.h"
#include "ui/rundata.h"

#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPAxisRect;
class QLabel;
class QListWidget;

class TimelinePage final : public QWidget {
    Q_OBJECT
public:
    explicit TimelinePage(QWidget* parent = nullptr);

    /// The run to show and its checkpoint `current` (highlighted); the timeline comes with the run's
    /// check (RunData::timeline) and may arrive later: call again when it does.
    void setRun(const RunDataPtr& run, int current);

    /// Shows a timeline without a run behind it (the HTML report's picture).
    void showTimeline(std::shared_ptr<const ckpt::Timeline> timeline);

    QListWidget* resumeList() const { return m_resumes; }
    QCustomPlot* plot() const { return m_plot; }
    /// Strips drawn under the loss (in order), for tests.
    QStringList stripNames() const { return m_stripNames; }
    /// The text above the plot: the run's verdict, then the resume points' summary.
    QString headline() const;
    bool savePng(const QString& path, int width, int height);

Q_SIGNALS:
    /// Compare these two checkpoints with this part (a componentName, "" for none) selected.
    void compareRequested(const QString& before, const QString& after, const QString& component);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    /// Shows, shortens or hides the checkpoints' labels so that none overlaps another at the
    /// plot's current width and zoom (PlotMath::layoutMarkerLabels); run after each layout.
    void placeCheckpointLabels();
    void activateResume(int index);

    RunDataPtr m_run;
    std::shared_ptr<const ckpt::Timeline> m_given; // showTimeline's, when there is no run
    int m_current = -1;
    std::shared_ptr<const ckpt::Timeline> m_shown;
    QLabel* m_headline;
    QListWidget* m_resumes;
    QCustomPlot* m_plot;
    QStringList m_stripNames;
    std::vector<MarkerText> m_tags;
    QCPAxisRect* m_top = nullptr;
};
