// SPDX-License-Identifier: MIT
#include "ui/pages/rngpage.h"

#include "ckpt/state/training_state.h"
#include "ui/pages/copytableview.h"
#include "ui/pages/stategridmodel.h"
#include "ui/textformat.h"

#include <QCheckBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QVBoxLayout>

RngPage::RngPage(QWidget* parent)
    : QWidget(parent)
    , m_model(new StateGridModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_view(new CopyTableView(this))
    , m_onlyDiffs(new QCheckBox(tr("Only highlighted rows"), this))
    , m_summary(new QLabel(this))
{
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_proxy->setSourceModel(m_model);
    m_proxy->setFilterRole(StateGridModel::DiffRole);
    m_proxy->setFilterKeyColumn(StateGridModel::Name);
    connect(m_onlyDiffs, &QCheckBox::toggled, this, [this](bool on) {
        // DiffRole is a bool: its text is "true" on the rows to keep
        m_proxy->setFilterFixedString(on ? QStringLiteral("true") : QString());
    });
    m_view->setModel(m_proxy);
    m_view->horizontalHeader()->setStretchLastSection(true);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_summary, 1);
    bar->addWidget(m_onlyDiffs);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);
    showGrid();
}

void RngPage::setCheckpoint(std::shared_ptr<const ckpt::TrainingState> state, std::shared_ptr<const ckpt::RunHistory>)
{
    m_model->setGrid(state ? stateGridByRank(*state) : StateGrid());
    showGrid();
}

void RngPage::setCheckpoints(const std::vector<std::shared_ptr<const ckpt::TrainingState>>& states, QStringList labels)
{
    for (std::size_t i = static_cast<std::size_t>(labels.size()); i < states.size(); ++i) {
        const auto& s = states[i];
        labels.append(!s ? QString()
                          : s->globalStep ? tr("step %1").arg(*s->globalStep)
                                          : QFileInfo(fromUtf8(s->path)).fileName());
    }
    m_model->setGrid(stateGridByCheckpoint(states, labels));
    showGrid();
}

QString RngPage::summaryText() const
{
    return m_summary->text();
}

void RngPage::showGrid()
{
    const int rows = m_model->rowCount();
    if (rows == 0)
        m_summary->setText(tr("No generator states, sampler fields or progress counters in this checkpoint."));
    else
        m_summary->setText(tr("%1 rows in %2 columns; %3 differ between columns (highlighted)")
                               .arg(rows)
                               .arg(m_model->grid().columns.size())
                               .arg(m_model->differingRows()));
    const QStringList notes = m_model->notes();
    if (!notes.isEmpty())
        m_summary->setText(m_summary->text() + QLatin1Char('\n') + notes.join(QLatin1Char('\n')));
    m_view->resizeColumnsToContents();
}
