# Golden values for perdoc, computed with R's clubSandwich, survey and base R.
#
# Usage: Rscript tests/oracle/oracle.R [ORACLE_DIR]
# Reads ORACLE_DIR/cases.json and ORACLE_DIR/data/*.csv (written by make_data.py) and writes
# ORACLE_DIR/golden.json: {case: {"dotted.key.path": value, ...}, "_versions": {...}}.
# The keys are dotted paths into perdoc's Result.to_dict() contract. ORACLE_DIR defaults to the
# directory of this script.
#
# Every cross-check below stops the script (non-zero exit) when it fails.
#
# Numbers are written with sprintf("%.17g") (exact round trip). jsonlite's digits = NA and
# digits = I(17) both print only 15 significant digits in jsonlite 1.8.x, which does not round-trip.

suppressPackageStartupMessages({
  library(jsonlite)
  library(survey)
  library(clubSandwich)
})

args <- commandArgs(trailingOnly = FALSE)
script <- sub("^--file=", "", args[grep("^--file=", args)])
trail <- commandArgs(trailingOnly = TRUE)
dir <- if (length(trail) >= 1) trail[1] else dirname(normalizePath(script))

cases <- fromJSON(file.path(dir, "cases.json"), simplifyVector = FALSE)

# ----------------------------------------------------------------------------- helpers
check <- function(what, a, b, tol = 1e-10) {
  a <- as.numeric(a); b <- as.numeric(b)
  ok <- length(a) == length(b) && all(is.finite(a)) && all(is.finite(b)) &&
    all(abs(a - b) <= tol * pmax(abs(a), abs(b), 1e-300) | abs(a - b) <= 1e-14)
  if (!ok) stop(sprintf("cross-check failed: %s: %s vs %s", what,
                        paste(format(a, digits = 17), collapse = ","),
                        paste(format(b, digits = 17), collapse = ",")), call. = FALSE)
  invisible(TRUE)
}

num_json <- function(x) {
  x <- as.numeric(x)
  f <- ifelse(is.finite(x), sprintf("%.17g", x), "null")
  structure(if (length(x) == 1) f else paste0("[", paste(f, collapse = ","), "]"), class = "json")
}

inv_sqrt_sym <- function(A) {
  e <- eigen(A, symmetric = TRUE)
  e$vectors %*% diag(1 / sqrt(e$values), nrow = length(e$values)) %*% t(e$vectors)
}

# Imbens-Kolesar (2016) degrees of freedom for the coefficient of lm(y ~ 1), clusters cl.
# Dense, literal: G has one column per cluster,
#   g_d = (I - H)[, d] A_d X_d (X'X)^-1,  A_d = (I - H_dd)^(-1/2),
# df = tr(G' Omega G)^2 / tr((G' Omega G)^2).
# Omega: Moulton working model as in Kolesar's dfadjust::dfadjustSE defaults (IK = TRUE,
# rho0 = FALSE): rho = (sum_d (sum_{i in d} u_i)^2 - ssr) / (sum n_d^2 - N), not truncated,
# 0 when the denominator is 0; sig = max(ssr/N - rho, 0); Omega = sig I + rho blockdiag(J).
# identity = TRUE uses Omega = I (Bell-McCaffrey), which must equal clubSandwich's CR2 df.
ik_df_dense <- function(y, cl, identity = FALSE) {
  N <- length(y)
  X <- matrix(1, N, 1)
  XtXi <- solve(crossprod(X))
  H <- X %*% XtXi %*% t(X)
  IH <- diag(N) - H
  u <- drop(IH %*% y)
  lev <- sort(unique(cl))
  G <- matrix(0, N, length(lev))
  for (d in seq_along(lev)) {
    idx <- which(cl == lev[d])
    A <- inv_sqrt_sym(diag(length(idx)) - H[idx, idx, drop = FALSE])
    G[, d] <- IH[, idx, drop = FALSE] %*% A %*% X[idx, , drop = FALSE] %*% XtXi
  }
  same <- outer(cl, cl, "==") * 1
  if (identity) {
    Omega <- diag(N)
  } else {
    ssr <- sum(u^2)
    nd <- as.numeric(table(cl))
    den <- sum(nd^2) - N
    rho <- if (den > 0) (sum(tapply(u, cl, sum)^2) - ssr) / den else 0
    sig <- max(ssr / N - rho, 0)
    Omega <- sig * diag(N) + rho * same
  }
  GOG <- t(G) %*% Omega %*% G
  sum(diag(GOG))^2 / sum(diag(GOG %*% GOG))
}

# The same df from a K x K form derived by hand for the intercept-only model (independent check):
# G = (E - 1 h') C with E the N x K cluster indicator, h = n/N, C = diag(1/(N sqrt(1-h)));
# G'G = C P C and G' E E' G = C P^2 C with P = diag(n) - n n'/N.
ik_df_compact <- function(n, s, q, identity = FALSE) {
  N <- sum(n); h <- n / N
  C <- diag(1 / (N * sqrt(1 - h)), nrow = length(n))
  P <- diag(n, nrow = length(n)) - tcrossprod(n) / N
  if (identity) { sig <- 1; rho <- 0 } else {
    R <- sum(s) / N
    ssr <- sum(q) - sum(s)^2 / N
    den <- sum(n^2) - N
    rho <- if (den > 0) (sum((s - R * n)^2) - ssr) / den else 0
    sig <- max(ssr / N - rho, 0)
  }
  GOG <- C %*% (sig * P + rho * P %*% P) %*% C
  sum(diag(GOG))^2 / sum(GOG^2)
}

# ----------------------------------------------------------------------------- one case
run_case <- function(case) {
  chunks <- read.csv(file.path(dir, "data", case$data), colClasses = c("character", "numeric"))
  stopifnot(identical(names(chunks), c("doc", "y")), !anyNA(chunks))
  level <- case$level
  a <- 1 - level
  M <- case$population_size  # NULL when absent
  has_M <- !is.null(M)

  docs <- data.frame(doc = sort(unique(chunks$doc)), stringsAsFactors = FALSE)
  docs$n <- as.numeric(tapply(chunks$y, chunks$doc, length)[docs$doc])
  docs$s <- as.numeric(tapply(chunks$y, chunks$doc, sum)[docs$doc])
  docs$q <- as.numeric(tapply(chunks$y^2, chunks$doc, sum)[docs$doc])
  docs$r <- docs$s / docs$n
  K <- nrow(docs); N <- sum(docs$n)
  if (has_M) { docs$M <- M; chunks$M <- M }
  fpc_fac <- if (has_M) sqrt(1 - K / M) else 1

  out <- list()
  out[["K"]] <- K
  out[["N"]] <- N
  out[["level"]] <- level

  # --------------------------------------------------------------- micro: ratio, CR1 (survey)
  des_docs <- suppressWarnings(if (has_M) svydesign(ids = ~doc, data = docs, fpc = ~M)
                               else svydesign(ids = ~doc, data = docs))
  sr <- svyratio(~s, ~n, des_docs)
  est <- as.numeric(coef(sr))
  se1 <- as.numeric(SE(sr))
  # the same from the chunk-level cluster design
  des_chunks <- suppressWarnings(if (has_M) svydesign(ids = ~doc, data = chunks, fpc = ~M)
                                 else svydesign(ids = ~doc, data = chunks))
  sm <- svymean(~y, des_chunks)
  check("svyratio estimate == chunk-level svymean", est, coef(sm))
  check("svyratio SE == chunk-level svymean SE", se1, SE(sm))
  check("ratio == S/N", est, sum(docs$s) / N)

  fit <- lm(y ~ 1, data = chunks)
  # CR1 without FPC: survey == clubSandwich CR1
  se1_nofpc <- as.numeric(SE(svyratio(~s, ~n, suppressWarnings(svydesign(ids = ~doc, data = docs)))))
  se1_cs <- sqrt(as.numeric(vcovCR(fit, cluster = chunks$doc, type = "CR1")[1, 1]))
  check("survey svyratio SE (no fpc) == clubSandwich CR1", se1_nofpc, se1_cs)
  if (has_M) check("svyratio SE with fpc == sqrt(1-K/M) * no-fpc SE", se1, se1_nofpc * fpc_fac)
  u <- docs$s - est * docs$n
  h <- docs$n / N
  check("CR1 closed form (methods.md)", se1, sqrt(K / (K - 1) * sum(u^2)) / N * fpc_fac)

  t1 <- qt(1 - a / 2, K - 1)
  out[["micro.estimate"]] <- est
  out[["micro.cr1.se"]] <- se1
  out[["micro.cr1.df"]] <- K - 1
  out[["micro.cr1.ci"]] <- c(est - t1 * se1, est + t1 * se1)

  # --------------------------------------------------------------- micro: CR2 + Satterthwaite (clubSandwich)
  ct <- coef_test(fit, vcov = "CR2", cluster = chunks$doc, test = "Satterthwaite")
  stopifnot(all(c("SE", "df_Satt", "beta") %in% names(ct)))
  check("coef_test beta == ratio", ct$beta, est)
  se2_nofpc <- as.numeric(ct$SE)
  df2 <- as.numeric(ct$df_Satt)
  check("CR2 se closed form (methods.md)", se2_nofpc, sqrt(sum(u^2 / (1 - h))) / N)
  qd <- docs$n^2 / (N - docs$n)
  df_bm <- N^2 / (sum(docs$n^2) + (sum(qd)^2 - sum(qd^2)))
  check("BM df closed form (methods.md)", df2, df_bm, tol = 1e-9)
  se2 <- se2_nofpc * fpc_fac  # FPC on CR2: heuristic (no source), as perdoc labels it
  t2 <- qt(1 - a / 2, df2)
  out[["micro.cr2.se"]] <- se2
  out[["micro.cr2.df"]] <- df2
  out[["micro.cr2.ci"]] <- c(est - t2 * se2, est + t2 * se2)

  # --------------------------------------------------------------- micro: CR3 (clubSandwich)
  se3_nofpc <- sqrt(as.numeric(vcovCR(fit, cluster = chunks$doc, type = "CR3")[1, 1]))
  check("CR3 closed form (methods.md)", se3_nofpc, sqrt(sum(u^2 / (1 - h)^2)) / N)
  se3 <- se3_nofpc * fpc_fac
  out[["micro.cr3.se"]] <- se3
  out[["micro.cr3.df"]] <- K - 1
  out[["micro.cr3.ci"]] <- c(est - t1 * se3, est + t1 * se3)

  # --------------------------------------------------------------- micro: IK df (dense, N <= 2000)
  if (N <= 2000) {
    df_bm_dense <- ik_df_dense(chunks$y, chunks$doc, identity = TRUE)
    check("dense IK code with Omega = I == clubSandwich CR2 Satterthwaite df", df_bm_dense, df2, tol = 1e-8)
    df_ik <- ik_df_dense(chunks$y, chunks$doc)
    check("dense IK df == compact K x K form", df_ik,
          ik_df_compact(docs$n, docs$s, docs$q), tol = 1e-8)
    check("compact form with Omega = I == clubSandwich df", df2,
          ik_df_compact(docs$n, docs$s, docs$q, identity = TRUE), tol = 1e-8)
    out[["micro.cr2_ik.df"]] <- df_ik
  }

  # --------------------------------------------------------------- macro: t on document rates
  if (!has_M) {
    tt <- t.test(docs$r, conf.level = level)
    out[["macro.estimate"]] <- as.numeric(tt$estimate)
    out[["macro.t.se"]] <- as.numeric(tt$stderr)
    out[["macro.t.df"]] <- as.numeric(tt$parameter)
    out[["macro.t.ci"]] <- as.numeric(tt$conf.int)
  } else {
    des1 <- svydesign(ids = ~1, data = docs, fpc = ~M)
    smr <- svymean(~r, des1)
    mest <- as.numeric(coef(smr)); mse <- as.numeric(SE(smr))
    check("macro se with fpc == sd(r)/sqrt(K)*sqrt(1-K/M)", mse, sd(docs$r) / sqrt(K) * fpc_fac)
    out[["macro.estimate"]] <- mest
    out[["macro.t.se"]] <- mse
    out[["macro.t.df"]] <- K - 1
    out[["macro.t.ci"]] <- c(mest - t1 * mse, mest + t1 * mse)
  }
  check("macro estimate == mean(r)", out[["macro.estimate"]], mean(docs$r))

  # --------------------------------------------------------------- diagnostics
  av <- anova(lm(y ~ factor(doc), data = chunks))
  MSB <- av["factor(doc)", "Mean Sq"]; MSW <- av["Residuals", "Mean Sq"]
  n0 <- (N - sum(docs$n^2) / N) / (K - 1)
  icc <- (MSB - MSW) / (MSB + (n0 - 1) * MSW)
  nbar_w <- sum(docs$n^2) / N
  deff <- 1 + (nbar_w - 1) * icc
  n_eff <- N / deff
  out[["diagnostics.icc"]] <- icc
  out[["diagnostics.deff"]] <- deff
  out[["diagnostics.n_eff"]] <- n_eff
  out[["diagnostics.g_star"]] <- N^2 / sum(docs$n^2)
  out[["diagnostics.max_share"]] <- max(docs$n) / N
  out[["diagnostics.frac_rate_0"]] <- mean(docs$r == 0)
  out[["diagnostics.frac_rate_1"]] <- mean(docs$r == 1)
  # survey's deff = "replace": design variance of svymean (here the with-replacement cluster
  # variance = CR1 without FPC, c1 * sum u_d^2 / N^2) divided by the variance under simple random
  # sampling WITH replacement of chunks, svyvar(y)/N, where svyvar is the n-1 sample variance var(y).
  # So deff_realised = V_CR1(no fpc) / (var(y)/N). Always computed without FPC.
  des_nofpc <- suppressWarnings(svydesign(ids = ~doc, data = chunks))
  dr <- as.numeric(deff(svymean(~y, des_nofpc, deff = "replace")))
  check("deff_realised == V_CR1 / (var(y)/N)", dr, se1_nofpc^2 / (var(chunks$y) / N))
  out[["diagnostics.deff_realised"]] <- dr

  # --------------------------------------------------------------- Wald baselines (contrast only)
  v <- mean((chunks$y - mean(chunks$y))^2)  # population variance; p(1-p) for 0/1 scores
  if (all(chunks$y %in% c(0, 1))) check("v == p(1-p) for binary", v, est * (1 - est))
  z <- qnorm(1 - a / 2)
  se_iid <- sqrt(v / N) * fpc_fac
  se_eff <- sqrt(v / n_eff) * fpc_fac
  out[["micro.wald_iid.se"]] <- se_iid
  out[["micro.wald_iid.ci"]] <- c(est - z * se_iid, est + z * se_iid)
  out[["micro.wald_eff_n.se"]] <- se_eff
  out[["micro.wald_eff_n.ci"]] <- c(est - z * se_eff, est + z * se_eff)

  out
}

golden <- list()
for (nm in sort(names(cases))) {
  res <- run_case(cases[[nm]])
  golden[[nm]] <- lapply(res, num_json)
  cat(sprintf("%-22s K=%-3d N=%-4d micro=%.4f cr2 df=%.3f ik df=%s\n", nm, res$K, res$N,
              res[["micro.estimate"]], res[["micro.cr2.df"]],
              if (is.null(res[["micro.cr2_ik.df"]])) "-" else sprintf("%.3f", res[["micro.cr2_ik.df"]])))
}
golden[["_versions"]] <- list(
  R = R.version.string,
  clubSandwich = as.character(packageVersion("clubSandwich")),
  survey = as.character(packageVersion("survey")),
  jsonlite = as.character(packageVersion("jsonlite"))
)
writeLines(toJSON(golden, auto_unbox = TRUE, json_verbatim = TRUE, pretty = TRUE),
           file.path(dir, "golden.json"))
cat("wrote", file.path(dir, "golden.json"), "\n")
