// SPDX-License-Identifier: MIT
#include "ui/tensorspage.h"

#include "core/checkpoint_file.h"
#include "ui/models/tensorproxymodel.h"
#include "ui/models/tensortablemodel.h"
#include "ui/textformat.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>

TensorsPage::TensorsPage(QWidget* parent)
    : QWidget(parent)
    , m_model(new TensorTableModel(this))
    , m_proxy(new TensorProxyModel(this))
    , m_filter(new QLineEdit(this))
    , m_summary(new QLabel(this))
    , m_view(new QTableView(this))
    , m_empty(new QLabel(this))
{
    m_proxy->setSourceModel(m_model);

    m_filter->setPlaceholderText(tr("Filter by key…"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_proxy->setKeyFilter(text);
        updateSummary();
    });

    m_view->setModel(m_proxy);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideMiddle); // long keys keep their informative end
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder); // file order until a header is clicked
    m_view->setSortingEnabled(true);

    m_empty->setText(tr("This file holds no tensors; the Tree tab shows what it does hold."));
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->hide();

    auto* top = new QHBoxLayout;
    top->addWidget(m_filter, 1);
    top->addWidget(m_summary);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_view);
    layout->addWidget(m_empty, 1);
}

void TensorsPage::setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file)
{
    m_file = file;
    m_model->setFile(file);
    const bool noTensors = file && file->tensorEntries().empty();
    m_view->setVisible(!noTensors);
    m_filter->setEnabled(!noTensors);
    m_empty->setVisible(noTensors);
    m_view->resizeColumnsToContents();
    // Keys can be very long (nested optimizer state): keep the other columns on screen.
    const int maxKeyWidth = qMax(240, m_view->width() / 2);
    if (m_view->columnWidth(TensorTableModel::Key) > maxKeyWidth)
        m_view->setColumnWidth(TensorTableModel::Key, maxKeyWidth);
    updateSummary();
}

void TensorsPage::updateSummary()
{
    if (!m_file) {
        m_summary->clear();
        return;
    }
    uint64_t bytes = 0;
    for (const auto& entry : m_file->tensorEntries()) {
        if (!entry.alias)
            bytes += m_file->tensors()[entry.tensor].nbytes();
    }
    const int total = m_model->rowCount();
    const int shown = m_proxy->rowCount();
    const QString count = shown == total ? tr("%1 tensors").arg(total) : tr("%1 of %2 tensors").arg(shown).arg(total);
    m_summary->setText(count + QStringLiteral(", ") + humanBytes(bytes));
}
