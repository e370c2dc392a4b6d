// SPDX-License-Identifier: MIT
#include "ui/runbrowser.h"

#include "ui/copyaction.h"
#include "ui/errorpanel.h"
#include "ui/models/runbrowsermodel.h"

#include <QAction>
#include <QHeaderView>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

RunBrowser::RunBrowser(RunBrowserModel* model, QWidget* parent)
    : QWidget(parent)
    , m_model(model)
    , m_view(new QTreeView(this))
    , m_errors(new ErrorPanel(tr("Could not open"), this))
{
    m_view->setObjectName(QStringLiteral("runBrowserView"));
    m_view->setModel(model);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setTextElideMode(Qt::ElideMiddle);
    // The name takes what is left (elided in the middle, the path in its tooltip); the marks and the
    // findings badge are as wide as their text, so "2 err 1 warn 2 info" is never cut.
    QHeaderView* header = m_view->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(RunBrowserModel::Name, QHeaderView::Stretch);
    header->setSectionResizeMode(RunBrowserModel::Step, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(RunBrowserModel::Marks, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(RunBrowserModel::Findings, QHeaderView::ResizeToContents);
    // Sized from the rows on screen: by default the header measures up to 1000 rows at every change,
    // and a run of 1000 checkpoints reports 1000 states: ~50 ms each on the GUI thread, seconds of
    // frozen window in all (bench_gui_run.py --checkpoints 1000).
    header->setResizeContentsPrecision(0);
    installCopyAction(m_view);

    auto* compare = new QAction(tr("Compare the two selected"), m_view);
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    compare->setShortcutContext(Qt::WidgetShortcut);
    connect(compare, &QAction::triggered, this, &RunBrowser::requestCompare);
    m_view->addAction(compare);
    auto* close = new QAction(tr("Close run"), m_view);
    close->setShortcut(QKeySequence::Delete);
    close->setShortcutContext(Qt::WidgetShortcut);
    connect(close, &QAction::triggered, this, [this] {
        const QModelIndex current = m_view->currentIndex();
        if (current.isValid())
            emit closeRunRequested(current.data(RunBrowserModel::RunIdRole).toInt());
    });
    m_view->addAction(close);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
        if (!current.isValid())
            return;
        const int runId = current.data(RunBrowserModel::RunIdRole).toInt();
        int index = current.data(RunBrowserModel::CheckpointIndexRole).toInt();
        if (index < 0) {
            const auto run = m_model->run(runId);
            index = run ? run->latestIndex() : -1; // a run row shows what a resume would load
        }
        if (index >= 0)
            emit checkpointSelected(runId, index);
    });
    // A newly opened run shows its checkpoints at once.
    connect(model, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex& parent, int first, int last) {
        if (parent.isValid())
            return;
        for (int row = first; row <= last; ++row)
            m_view->expand(m_model->index(row, 0));
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_errors);
}

void RunBrowser::selectCheckpoint(int runId, int index)
{
    const QModelIndex target = m_model->checkpointIndex(runId, index);
    if (!target.isValid())
        return;
    m_view->selectionModel()->setCurrentIndex(target, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(target);
}

void RunBrowser::selectAlso(int runId, const QList<int>& indices)
{
    QItemSelection rows;
    for (const int index : indices) {
        const QModelIndex target = m_model->checkpointIndex(runId, index);
        if (target.isValid())
            rows.select(target, target);
    }
    m_view->selectionModel()->select(rows, QItemSelectionModel::Select | QItemSelectionModel::Rows);
}

void RunBrowser::revealCheckpoint(int runId, int index)
{
    const QModelIndex target = m_model->checkpointIndex(runId, index);
    if (!target.isValid())
        return;
    QItemSelectionModel* selection = m_view->selectionModel();
    const bool selected = selection->isRowSelected(target.row(), target.parent());
    selection->setCurrentIndex(target, selected ? QItemSelectionModel::NoUpdate : QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(target);
}

bool RunBrowser::selectedPair(int& runA, int& indexA, int& runB, int& indexB) const
{
    QModelIndexList rows = m_view->selectionModel()->selectedRows();
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [](const QModelIndex& i) { return i.data(RunBrowserModel::CheckpointIndexRole).toInt() < 0; }),
               rows.end());
    if (rows.size() != 2)
        return false;
    // A is the one higher in the browser: the earlier step of a run.
    std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) {
        return a.parent().row() != b.parent().row() ? a.parent().row() < b.parent().row() : a.row() < b.row();
    });
    runA = rows[0].data(RunBrowserModel::RunIdRole).toInt();
    indexA = rows[0].data(RunBrowserModel::CheckpointIndexRole).toInt();
    runB = rows[1].data(RunBrowserModel::RunIdRole).toInt();
    indexB = rows[1].data(RunBrowserModel::CheckpointIndexRole).toInt();
    return true;
}

void RunBrowser::requestCompare()
{
    int runA = 0, indexA = 0, runB = 0, indexB = 0;
    if (selectedPair(runA, indexA, runB, indexB))
        emit compareRequested(runA, indexA, runB, indexB);
}
