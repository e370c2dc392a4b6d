// SPDX-License-Identifier: MIT
#include "ui/errorpanel.h"

#include "ui/copyaction.h"
#include "ui/palettecolors.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QToolButton>
#include <QVBoxLayout>

ErrorPanel::ErrorPanel(const QString& title, QWidget* parent)
    : QWidget(parent)
    , m_title(new QLabel(title, this))
    , m_list(new QListWidget(this))
{
    setObjectName(QStringLiteral("errorPanel"));
    m_list->setWordWrap(true);
    m_list->setMaximumHeight(110);
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    installCopyAction(m_list);
    auto* dismiss = new QToolButton(this);
    dismiss->setText(tr("Dismiss"));
    dismiss->setAutoRaise(true);
    connect(dismiss, &QToolButton::clicked, this, &ErrorPanel::clear);

    auto* top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(dismiss);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 2, 0, 2);
    layout->setSpacing(2);
    layout->addLayout(top);
    layout->addWidget(m_list);
    hide();
    updateColours();
}

void ErrorPanel::addError(const QString& path, const QString& reason)
{
    // The reason often starts with the path already ("PATH: reason"): do not repeat it.
    const QString text = reason.startsWith(path) ? reason : path + QStringLiteral(": ") + reason;
    auto* item = new QListWidgetItem(text, m_list);
    item->setToolTip(text);
    item->setForeground(warningColor(palette()));
    m_title->setText(m_title->text().section(QStringLiteral(" ("), 0, 0) + QStringLiteral(" (%1)").arg(m_list->count()));
    show();
}

void ErrorPanel::clear()
{
    m_list->clear();
    m_title->setText(m_title->text().section(QStringLiteral(" ("), 0, 0));
    hide();
}

int ErrorPanel::count() const
{
    return m_list->count();
}

void ErrorPanel::updateColours()
{
    QPalette p = m_title->palette();
    p.setColor(QPalette::WindowText, warningColor(palette()));
    m_title->setPalette(p);
    for (int i = 0; i < m_list->count(); ++i)
        m_list->item(i)->setForeground(warningColor(palette()));
}

void ErrorPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange)
        updateColours();
    QWidget::changeEvent(event);
}
