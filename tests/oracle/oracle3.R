# Golden values for design-based estimates of drawn samples (perdoc sample, perdoc estimate --sample),
# computed with R's survey package.
#
# Usage: Rscript tests/oracle/oracle3.R [ORACLE_DIR]
# Reads ORACLE_DIR/cases3.json and the labels files it names (written by make_data3.py: one row per
# labelled chunk with doc, stratum, prob, draw, chunk, n and the label y) and writes
# ORACLE_DIR/golden3.json: {case: {"micro.estimate": ..., "micro.se": ..., "macro.estimate": ...,
# "macro.se": ..., "degf": ..., "judge.micro.estimate": ..., ...}, "_versions": {...}}; the judge.* values
# are those of y - judge_lambda * x (the labels' judge column x), as perdoc.methods.ppi.ppi_design
# with a fixed weight computes them before adding the judge's known population mean.
#
# The design, stratum by stratum, as perdoc.survey reads it from the manifest: a stratum whose
# probabilities are all 1 is take-all (fpc = its documents); one with equal probabilities below 1 is a
# simple random sample (fpc = k_h / prob = M_h); one with unequal probabilities is treated as drawn
# with replacement (no fpc when every stratum is such; otherwise an fpc of 1e15, which makes the
# finite population factor 1 and the second-stage term vanish to within 1e-13). The second stage
# is a simple random sample of m_j of the document's n chunks (fpc = n). Weights: n / (prob * m_j).
# Micro mean: svymean(~y); macro mean: svyratio(~I(y / n), ~I(1 / n)).
# GREG cases: a simple random sample of documents (n, s) calibrated to the frame's totals (M, N) with
# calibrate(design, ~n, population = c(M, N)); micro mean svyratio(~s, ~n, calibrated design), its
# standard error by the JK1 jackknife with recalibrated replicates (as.svrepdesign(type = "JK1")).

suppressPackageStartupMessages({
  library(jsonlite)
  library(survey)
})

args <- commandArgs(trailingOnly = FALSE)
script <- sub("^--file=", "", args[grep("^--file=", args)])
trail <- commandArgs(trailingOnly = TRUE)
dir <- if (length(trail) >= 1) trail[1] else dirname(normalizePath(script))
cases <- fromJSON(file.path(dir, "cases3.json"), simplifyVector = FALSE)

num_json <- function(x) structure(sprintf("%.17g", as.numeric(x)), class = "json")

out <- list()
for (name in names(cases)) {
  cs <- cases[[name]]
  if (!is.null(cs$greg)) {
    # GREG: SRS of K documents, calibrated (linear) to the frame's M documents and N chunks
    d <- read.csv(file.path(dir, cs$greg))
    d$fpc <- cs$M
    des <- svydesign(ids = ~1, fpc = ~fpc, data = d)
    cal <- calibrate(des, ~n, population = c(`(Intercept)` = cs$M, n = cs$N))
    r <- svyratio(~s, ~n, cal)
    # the jackknife perdoc uses: delete one document, recalibrate the weights, scale by (1 - K/M)
    jk <- calibrate(as.svrepdesign(des, type = "JK1"), ~n, population = c(`(Intercept)` = cs$M, n = cs$N))
    rj <- svyratio(~s, ~n, jk)
    out[[name]] <- list("micro.estimate" = num_json(coef(r)), "micro.se_linearised" = num_json(SE(r)),
                        "micro.se" = num_json(SE(rj)), "micro.estimate_jk" = num_json(coef(rj)))
    next
  }
  d <- read.csv(file.path(dir, cs$labels), stringsAsFactors = FALSE, colClasses = c(doc = "character"))
  d$psu <- paste(d$doc, d$draw, sep = "#")
  m <- ave(d$y, d$psu, FUN = length)
  d$w <- d$n / (d$prob * m)
  kind <- sapply(split(d, d$stratum), function(s) {
    p <- s$prob[!duplicated(s$psu)]
    if (all(p == 1)) "takeall" else if (all(p == p[1]) && all(s$draw == 1)) "srs" else "unequal"
  })
  k_h <- tapply(d$psu, d$stratum, function(x) length(unique(x)))
  d$kind <- kind[d$stratum]
  d$fpc1 <- ifelse(d$kind == "takeall", k_h[d$stratum], ifelse(d$kind == "srs", k_h[d$stratum] / d$prob, 1e15))
  d$cid <- paste(d$psu, d$chunk, sep = ":")
  d$yN <- d$y / d$n
  d$invN <- 1 / d$n
  if (all(kind == "unequal")) {
    des <- svydesign(ids = ~psu + cid, strata = ~stratum, weights = ~w, data = d, nest = TRUE)
  } else {
    des <- svydesign(ids = ~psu + cid, strata = ~stratum, weights = ~w, fpc = ~fpc1 + n, data = d, nest = TRUE)
  }
  mi <- svymean(~y, des)
  ma <- svyratio(~yN, ~invN, des)
  res <- list("micro.estimate" = num_json(coef(mi)), "micro.se" = num_json(SE(mi)),
              "macro.estimate" = num_json(coef(ma)), "macro.se" = num_json(SE(ma)),
              "degf" = num_json(degf(des)))
  if (!is.null(cs$judge_lambda) && "x" %in% names(d)) {
    # the judge-assisted estimate with a fixed weight: the design mean of y - lambda x (perdoc adds
    # lambda times the judge's known population mean)
    lam <- cs$judge_lambda
    des <- update(des, e = y - lam * x, eN = (y - lam * x) / n)
    ji <- svymean(~e, des)
    ja <- svyratio(~eN, ~invN, des)
    res <- c(res, list("judge.micro.estimate" = num_json(coef(ji)), "judge.micro.se" = num_json(SE(ji)),
                       "judge.macro.estimate" = num_json(coef(ja)), "judge.macro.se" = num_json(SE(ja))))
  }
  out[[name]] <- res
}
out[["_versions"]] <- list(R = paste(R.version$major, R.version$minor, sep = "."),
                           survey = as.character(packageVersion("survey")))
writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, json_verbatim = TRUE), file.path(dir, "golden3.json"))
