// SPDX-License-Identifier: MIT
#include "ui/reporthtml.h"

#include "ui/pages/timelinepage.h"
#include "ui/plots/curveplot.h"
#include "ui/plots/plotmath.h"

#include "ckpt/findings/finding_groups.h"
#include "ckpt/frameworks/framework_registry.h"
#include "ckpt/rules/rule_catalogue.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cmath>

namespace {

QString fromUtf8(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString esc(const std::string& s)
{
    return fromUtf8(s).toHtmlEscaped();
}

QString baseName(const std::string& path)
{
    return QFileInfo(fromUtf8(path)).fileName().toHtmlEscaped();
}

QString imgTag(const QByteArray& png, const QString& alt)
{
    if (png.isEmpty())
        return {};
    return QStringLiteral("<p><img alt=\"%1\" src=\"data:image/png;base64,%2\"></p>\n").arg(alt.toHtmlEscaped(), QString::fromLatin1(png.toBase64()));
}

QByteArray readAndRemove(const QString& file)
{
    QFile f(file);
    QByteArray bytes;
    if (f.open(QIODevice::ReadOnly))
        bytes = f.readAll();
    f.remove();
    return bytes;
}

// The timeline as the tab draws it.
QByteArray timelinePng(const ckpt::RunReport& r, const QPalette& palette, const QString& dir)
{
    if (!r.timeline)
        return {};
    TimelinePage page;
    page.setPalette(palette);
    page.showTimeline(std::make_shared<const ckpt::Timeline>(*r.timeline));
    const QString file = dir + QStringLiteral("/timeline.png");
    if (!page.savePng(file, 1200, 160 + 90 * static_cast<int>(r.timeline->strips.size())))
        return {};
    return readAndRemove(file);
}

PlotMath::Curve curveOf(const ckpt::StepSeries& s)
{
    PlotMath::Curve c;
    for (const auto& [step, v] : s) {
        if (std::isfinite(v)) {
            c.x.push_back(static_cast<double>(step));
            c.y.push_back(v);
        }
    }
    return c;
}

// Loss (left axis) and LR (right: logged and as the checkpoints saved it), and the moment norm.
QByteArray curvesPng(const ckpt::Timeline& t, const QPalette& palette, const QString& dir, bool moments)
{
    CurvePlot plot;
    plot.setPalette(palette);
    int curves = 0;
    std::vector<double> steps;
    QStringList labels;
    for (const auto& c : t.checkpoints) {
        if (c.step) {
            steps.push_back(static_cast<double>(*c.step));
            labels << QFileInfo(fromUtf8(c.path)).fileName();
        }
    }
    plot.setMarkers(steps, labels);
    if (!moments) {
        plot.setAxisLabels(QObject::tr("step"), QObject::tr("loss"), QObject::tr("learning rate"));
        const std::string lossName = PlotMath::pickSeries(t.logged, ckpt::lossMetricNames(), "loss", {"eval", "val", "test", "scale"});
        if (!lossName.empty())
            curves += plot.addCurve(fromUtf8(lossName), curveOf(t.logged.at(lossName)), CurvePlot::Axis::Left, 0) >= 0;
        for (const auto& s : t.strips) {
            if (s.name != "lr")
                continue;
            if (!s.reference.empty())
                curves += plot.addCurve(fromUtf8(s.referenceName), curveOf(s.reference), CurvePlot::Axis::Right, 1) >= 0;
            curves += plot.addCurve(QObject::tr("lr saved by the checkpoints"), curveOf(s.points), CurvePlot::Axis::Right, 2,
                                    CurvePlot::Style::Points) >= 0;
        }
    } else {
        plot.setAxisLabels(QObject::tr("step"), QObject::tr("first-moment norm"));
        for (const auto& s : t.strips) {
            if (s.name == "moment norm")
                curves += plot.addCurve(QObject::tr("‖exp_avg‖ over all parameters"), curveOf(s.points), CurvePlot::Axis::Left, 3,
                                        CurvePlot::Style::Points) >= 0;
        }
    }
    if (!curves)
        return {};
    plot.fit();
    const QString file = dir + (moments ? QStringLiteral("/moments.png") : QStringLiteral("/loss_lr.png"));
    if (!plot.savePng(file, 1000, 360))
        return {};
    return readAndRemove(file);
}

const char* statusText(ckpt::DiffStatus s)
{
    switch (s) {
    case ckpt::DiffStatus::Changed: return "changed";
    case ckpt::DiffStatus::OnlyA: return "only in A";
    case ckpt::DiffStatus::OnlyB: return "only in B";
    case ckpt::DiffStatus::ShapeChanged: return "shape changed";
    case ckpt::DiffStatus::DtypeChanged: return "dtype changed";
    default: return "equal";
    }
}

} // namespace

ckpt::RunReport buildReportForExport(const QString& path, const std::function<bool()>& keepGoing)
{
    ckpt::ReportOptions options;
    options.progress = [keepGoing](const ckpt::CheckProgress&) { return keepGoing(); };
    return ckpt::buildRunReport(path.toStdString(), options);
}

QString renderReportHtml(const ckpt::RunReport& r, const QPalette& palette)
{
    QTemporaryDir tmp; // the plots are written here and read back: CurvePlot saves to files
    const QString dir = tmp.path();
    const ckpt::CheckReport& c = r.check;
    QString h;
    h += QStringLiteral("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Checkpoint report: %1</title>\n"
                        "<style>body{font-family:sans-serif;max-width:1250px;margin:1em auto;line-height:1.4}"
                        "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:left;vertical-align:top}"
                        ".error{color:#b00020;font-weight:bold}.warning{color:#a15c00;font-weight:bold}.info{color:#1a55a0}"
                        "code{background:#f2f2f2;padding:0 2px}img{max-width:100%%}</style></head><body>\n")
             .arg(baseName(r.path));
    h += QStringLiteral("<h1>Checkpoint report: %1</h1>\n<ul><li>path: <code>%2</code></li><li>%3 of %4 checkpoint(s); findings: "
                        "<span class=\"error\">%5 error(s)</span>, <span class=\"warning\">%6 warning(s)</span>, %7 info</li></ul>\n")
             .arg(baseName(r.path), esc(r.path), esc(c.kind))
             .arg(c.checkpoints.size())
             .arg(c.count(ckpt::Severity::Error))
             .arg(c.count(ckpt::Severity::Warning))
             .arg(c.count(ckpt::Severity::Info));

    // The order a reader needs: the verdict, the resume points, what is wrong (each group once), the
    // timeline, then what is not recorded (folded), the states, the pair and the validations.
    const std::vector<ckpt::FindingGroup> groups = ckpt::groupFindings(c.findings, c.checkpoints);
    const ckpt::Verdict verdict = ckpt::verdictOf(c.findings, groups, c.checkpoints.size(), ckpt::ruleCatalogue().size());
    h += QStringLiteral("<h2 id=\"verdict\">Verdict</h2>\n<p>%1</p>\n").arg(esc(verdict.headline));
    if (!verdict.lines.empty()) {
        h += QStringLiteral("<ol>\n");
        for (const auto& line : verdict.lines)
            h += QStringLiteral("<li>%1</li>\n").arg(esc(line));
        h += QStringLiteral("</ol>\n");
    }

    if (r.timeline) {
        const ckpt::Timeline& t = *r.timeline;
        h += QStringLiteral("<h2 id=\"resumes\">Resume points</h2>\n");
        if (t.resumes.empty()) {
            h += QStringLiteral("<p>No resume point was found (logs, probes and consecutive checkpoints agree).</p>\n");
        } else {
            h += QStringLiteral("<table><tr><th>resume at step</th><th>before</th><th>after</th><th>first differing part</th><th>evidence</th></tr>\n");
            for (const auto& p : t.resumes) {
                QString evidence;
                for (const auto& e : p.evidence)
                    evidence += (evidence.isEmpty() ? QString() : QStringLiteral("<br>")) + esc(e);
                h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td></tr>\n")
                         .arg(p.from == p.to ? QString::number(p.from) : QStringLiteral("%1-%2").arg(p.from).arg(p.to),
                              p.before.empty() ? QStringLiteral("-") : baseName(p.before), p.after.empty() ? QStringLiteral("-") : baseName(p.after),
                              p.firstComponent.empty() ? QStringLiteral("-") : esc(p.firstComponent), evidence);
            }
            h += QStringLiteral("</table>\n");
        }
    }

    h += QStringLiteral("<h2 id=\"findings\">Errors and warnings</h2>\n");
    QString loud;
    for (const auto& g : groups) {
        if (g.severity == ckpt::Severity::Info)
            continue;
        const ckpt::Finding& f = c.findings[g.members.front()];
        const std::string where = ckpt::groupWhere(g);
        loud += QStringLiteral("<li><span class=\"%1\">%1</span> <code>%2</code> (%3): %4<ul>")
                    .arg(QString::fromLatin1(ckpt::severityName(g.severity)), esc(g.rule),
                         esc(std::string(ckpt::componentName(g.component)) + (where.empty() ? "" : "; " + where)), esc(g.message));
        for (const auto& cp : f.checkpoints)
            loud += QStringLiteral("<li>checkpoint: <code>%1</code></li>").arg(baseName(cp));
        for (const auto& e : f.evidence)
            loud += QStringLiteral("<li>%1: %2 <small><code>%3</code></small></li>").arg(esc(e.what), esc(e.value), esc(e.where));
        if (g.members.size() > 1)
            loud += QStringLiteral("<li>and %1 similar</li>").arg(g.members.size() - 1);
        if (!g.assumes.empty())
            loud += QStringLiteral("<li>assumes: %1</li>").arg(esc(g.assumes));
        if (!g.hint.empty())
            loud += QStringLiteral("<li>hint: %1</li>").arg(esc(g.hint));
        loud += QStringLiteral("</ul></li>\n");
    }
    h += loud.isEmpty() ? QStringLiteral("<p>None.</p>\n") : QStringLiteral("<ul>\n%1</ul>\n").arg(loud);

    if (r.timeline) {
        const ckpt::Timeline& t = *r.timeline;
        h += QStringLiteral("<h2 id=\"timeline\">Timeline</h2>\n");
        h += imgTag(timelinePng(r, palette, dir), QStringLiteral("timeline"));
        h += QStringLiteral("<h2 id=\"loss-lr\">Loss and learning rate</h2>\n") + imgTag(curvesPng(t, palette, dir, false), QStringLiteral("loss and LR"));
        h += QStringLiteral("<h2 id=\"moments\">Moment norms</h2>\n") + imgTag(curvesPng(t, palette, dir, true), QStringLiteral("moment norms"));
    }

    QString quiet;
    std::size_t quietGroups = 0;
    for (const auto& g : groups) {
        if (g.severity != ckpt::Severity::Info)
            continue;
        ++quietGroups;
        const std::string where = ckpt::groupWhere(g);
        quiet += QStringLiteral("<li><code>%1</code> (%2): %3%4</li>\n")
                     .arg(esc(g.rule), esc(std::string(ckpt::componentName(g.component)) + (where.empty() ? "" : "; " + where)), esc(g.message),
                          g.hint.empty() ? QString() : QStringLiteral("<br><small>hint: %1</small>").arg(esc(g.hint)));
    }
    if (quietGroups)
        h += QStringLiteral("<h2 id=\"info\">Not recorded or not decidable from the files (info)</h2>\n"
                            "<details><summary>%1 group(s), %2 finding(s)</summary>\n<ul>\n%3</ul>\n</details>\n")
                 .arg(quietGroups)
                 .arg(c.count(ckpt::Severity::Info))
                 .arg(quiet);

    h += QStringLiteral("<h2 id=\"states\">S_t per checkpoint</h2>\n");
    for (const auto& s : c.states) {
        h += QStringLiteral("<h3>%1%2</h3>\n<table>").arg(baseName(s.path), s.step ? QStringLiteral(" (step %1)").arg(*s.step) : QString());
        for (const auto& [k, v] : s.parts)
            h += QStringLiteral("<tr><th>%1</th><td>%2</td></tr>").arg(esc(k), esc(v));
        h += QStringLiteral("</table>\n");
    }

    if (r.pair) {
        const ckpt::PairSummary& p = *r.pair;
        h += QStringLiteral("<h2 id=\"pair\">Pair: %1 → %2</h2>\n<p>Compared: %3. Tensors: %4 equal, %5 changed, %6 only in A, %7 only in B.</p>\n")
                 .arg(baseName(p.a), baseName(p.b), esc(p.why))
                 .arg(p.counts.equal)
                 .arg(p.counts.changed)
                 .arg(p.counts.onlyA)
                 .arg(p.counts.onlyB);
        if (!p.states.empty()) {
            h += QStringLiteral("<table><tr><th>part</th><th>field</th><th>A</th><th>B</th><th></th></tr>\n");
            for (const auto& s : p.states)
                h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td></tr>\n")
                         .arg(esc(s.component), esc(s.name), esc(s.a), esc(s.b), esc(s.status));
            h += QStringLiteral("</table>\n");
        }
        if (!p.tensors.empty()) {
            h += QStringLiteral("<table><tr><th>tensor</th><th>status</th><th>relative L2</th><th>max abs diff</th></tr>\n");
            for (const auto& t : p.tensors)
                h += QStringLiteral("<tr><td><code>%1</code></td><td>%2</td><td>%3</td><td>%4</td></tr>\n")
                         .arg(esc(t.key), QString::fromLatin1(statusText(t.status)),
                              t.status == ckpt::DiffStatus::Changed && std::isfinite(t.relL2) ? QString::number(t.relL2, 'g', 4) : QStringLiteral("-"),
                              t.status == ckpt::DiffStatus::Changed ? QString::number(t.maxAbsDiff, 'g', 4) : QStringLiteral("-"));
            h += QStringLiteral("</table>\n");
        }
    }

    h += QStringLiteral("<h2 id=\"validation\">Resume validation</h2>\n<ul>\n");
    if (r.probes.empty() && r.validations.empty())
        h += QStringLiteral("<li>No probe was recorded (ckpt_writer's <code>writer.probe()</code>), so no update can be replayed.</li>\n");
    for (const auto& p : r.probes)
        h += QStringLiteral("<li>probe after <code>%1</code>: recorded by %2, %3 update(s)</li>\n").arg(esc(p.checkpoint), esc(p.recordedBy)).arg(p.updates);
    for (const auto& v : r.validations)
        h += QStringLiteral("<li>validation of <code>%1</code>: <b>%2</b>%3</li>\n")
                 .arg(baseName(v.value("checkpoint", std::string("?"))), esc(v.value("verdict", std::string("?"))),
                      v.value("first_difference", nlohmann::json()).is_string()
                          ? QStringLiteral(" (first difference: %1)").arg(esc(v["first_difference"].get<std::string>()))
                          : QString());
    h += QStringLiteral("</ul>\n</body></html>\n");
    return h;
}
