# Golden values for the next perdoc features (paired comparison, stratified and two-stage designs,
# bounded intervals for binary metrics, enumerated wild cluster bootstrap), computed with R's
# clubSandwich, survey and base R.
#
# Usage: Rscript tests/oracle/oracle2.R [ORACLE_DIR]
# Reads ORACLE_DIR/cases2.json (written by make_data2.py), the data files it names (paths relative
# to ORACLE_DIR: data2/*.csv from make_data2.py, data/*.csv from make_data.py, read only) and
# ORACLE_DIR/golden.json (the first oracle, for one cross-check); writes ORACLE_DIR/golden2.json:
# {case: {"dotted.key.path": value, ...}, "_versions": {...}}. The keys are dotted paths into the
# JSON perdoc will produce (see tests/test_oracle2.py for the calls). ORACLE_DIR defaults to the
# directory of this script.
#
# Every cross-check stops the script (non-zero exit) when it fails.
# Numbers are written with sprintf("%.17g") (exact round trip), as in oracle.R.

suppressPackageStartupMessages({
  library(jsonlite)
  library(survey)
  library(clubSandwich)
})

args <- commandArgs(trailingOnly = FALSE)
script <- sub("^--file=", "", args[grep("^--file=", args)])
trail <- commandArgs(trailingOnly = TRUE)
dir <- if (length(trail) >= 1) trail[1] else dirname(normalizePath(script))

cases <- fromJSON(file.path(dir, "cases2.json"), simplifyVector = FALSE)
golden1_path <- file.path(dir, "golden.json")
golden1 <- if (file.exists(golden1_path)) fromJSON(golden1_path, simplifyVector = TRUE) else NULL

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

reldiff <- function(a, b) max(abs(a - b) / pmax(abs(a), abs(b), 1e-300))

num_json <- function(x) {
  if (is.logical(x)) return(structure(if (isTRUE(x)) "true" else "false", class = "json"))
  x <- as.numeric(x)
  f <- ifelse(is.finite(x), sprintf("%.17g", x), "null")
  structure(if (length(x) == 1) f else paste0("[", paste(f, collapse = ","), "]"), class = "json")
}

tci <- function(est, se, df, level) {
  t <- qt(1 - (1 - level) / 2, df)
  c(est - t * se, est + t * se)
}

read_data <- function(case, classes) {
  x <- read.csv(file.path(dir, case$data), colClasses = classes)
  stopifnot(!anyNA(x))
  x
}

# all 2^K sign vectors as the rows of a 2^K x K matrix of +-1 (row 1: all +1)
sign_matrix <- function(K) {
  b <- 0:(2^K - 1)
  m <- sapply(seq_len(K) - 1, function(j) (b %/% 2^j) %% 2)
  1 - 2 * matrix(m, ncol = K)
}

notes <- character()
note <- function(...) { msg <- sprintf(...); notes <<- c(notes, msg); cat("NOTE:", msg, "\n") }

# ============================================================================= A. paired comparison
run_compare <- function(case) {
  ch <- read_data(case, c("character", "numeric", "numeric"))
  stopifnot(identical(names(ch), c("doc", "a", "b")))
  level <- case$level
  M <- case$population_size
  has_M <- !is.null(M)
  ch$d <- ch$a - ch$b

  docs <- data.frame(doc = sort(unique(ch$doc)), stringsAsFactors = FALSE)
  docs$n <- as.numeric(tapply(ch$d, ch$doc, length)[docs$doc])
  docs$sa <- as.numeric(tapply(ch$a, ch$doc, sum)[docs$doc])
  docs$sb <- as.numeric(tapply(ch$b, ch$doc, sum)[docs$doc])
  docs$sd <- as.numeric(tapply(ch$d, ch$doc, sum)[docs$doc])
  docs$ra <- docs$sa / docs$n
  docs$rb <- docs$sb / docs$n
  K <- nrow(docs); N <- sum(docs$n)
  check("per-doc sum of d == s_a - s_b", docs$sd, docs$sa - docs$sb, tol = 1e-12)
  if (has_M) { docs$M <- M; ch$M <- M }
  fpc_fac <- if (has_M) sqrt(1 - K / M) else 1
  des <- suppressWarnings(if (has_M) svydesign(ids = ~doc, data = docs, fpc = ~M)
                          else svydesign(ids = ~doc, data = docs))
  des_nofpc <- suppressWarnings(svydesign(ids = ~doc, data = docs))
  out <- list()

  # ------------------------------------------------ difference, micro (lm(d ~ 1), cluster = doc)
  fit <- lm(d ~ 1, data = ch)
  sr <- svyratio(~sd, ~n, des)
  est <- as.numeric(coef(sr))
  check("difference estimate: svyratio == lm coef == sum D / N", c(est, est),
        c(coef(fit), sum(docs$sd) / N))
  se1 <- as.numeric(SE(sr))
  se1_cs <- sqrt(vcovCR(fit, cluster = ch$doc, type = "CR1")[1, 1])
  check("difference CR1: survey (no fpc) == clubSandwich CR1",
        SE(svyratio(~sd, ~n, des_nofpc)), se1_cs)
  check("difference CR1 with fpc == sqrt(1-K/M) * clubSandwich CR1", se1, se1_cs * fpc_fac)
  ct <- coef_test(fit, vcov = "CR2", cluster = ch$doc, test = "Satterthwaite")
  se2 <- as.numeric(ct$SE) * fpc_fac  # FPC on CR2/CR3: heuristic, as perdoc labels it
  df2 <- as.numeric(ct$df_Satt)
  se3 <- sqrt(vcovCR(fit, cluster = ch$doc, type = "CR3")[1, 1]) * fpc_fac
  uD <- docs$sd - est * docs$n
  h <- docs$n / N
  check("difference CR2 closed form", se2, sqrt(sum(uD^2 / (1 - h))) / N * fpc_fac)
  check("difference CR3 closed form", se3, sqrt(sum(uD^2 / (1 - h)^2)) / N * fpc_fac)
  qd <- docs$n^2 / (N - docs$n)
  check("BM df closed form (sizes only)", df2, N^2 / (sum(docs$n^2) + sum(qd)^2 - sum(qd^2)), tol = 1e-9)
  out[["difference.micro.estimate"]] <- est
  out[["difference.micro.cr1.se"]] <- se1
  out[["difference.micro.cr1.df"]] <- K - 1
  out[["difference.micro.cr1.ci"]] <- tci(est, se1, K - 1, level)
  out[["difference.micro.cr2.se"]] <- se2
  out[["difference.micro.cr2.df"]] <- df2
  out[["difference.micro.cr2.ci"]] <- tci(est, se2, df2, level)
  out[["difference.micro.cr3.se"]] <- se3
  out[["difference.micro.cr3.ci"]] <- tci(est, se3, K - 1, level)

  # ------------------------------------------------ difference, macro (t on r_a - r_b)
  dd <- docs$ra - docs$rb
  if (!has_M) {
    tt <- t.test(dd, conf.level = level)
    mest <- as.numeric(tt$estimate); mse <- as.numeric(tt$stderr); mci <- as.numeric(tt$conf.int)
    check("t.test on r_a - r_b == paired t.test", mci,
          t.test(docs$ra, docs$rb, paired = TRUE, conf.level = level)$conf.int)
  } else {
    docs$dd <- dd
    smr <- svymean(~dd, svydesign(ids = ~1, data = docs, fpc = ~M))
    mest <- as.numeric(coef(smr)); mse <- as.numeric(SE(smr))
    check("macro difference se with fpc", mse, sd(dd) / sqrt(K) * fpc_fac)
    mci <- tci(mest, mse, K - 1, level)
  }
  check("macro difference == mean(r_a) - mean(r_b)", mest, mean(docs$ra) - mean(docs$rb))
  out[["difference.macro.estimate"]] <- mest
  out[["difference.macro.t.se"]] <- mse
  out[["difference.macro.t.df"]] <- K - 1
  out[["difference.macro.t.ci"]] <- mci

  # ------------------------------------------------ each system
  sra <- svyratio(~sa, ~n, des); srb <- svyratio(~sb, ~n, des)
  out[["systems.a.micro.estimate"]] <- as.numeric(coef(sra))
  out[["systems.a.micro.cr1.se"]] <- as.numeric(SE(sra))
  out[["systems.a.macro.estimate"]] <- mean(docs$ra)
  out[["systems.b.micro.estimate"]] <- as.numeric(coef(srb))
  out[["systems.b.micro.cr1.se"]] <- as.numeric(SE(srb))
  out[["systems.b.macro.estimate"]] <- mean(docs$rb)
  check("Delta == R_a - R_b", est, coef(sra) - coef(srb))

  # ------------------------------------------------ correlation and covariance of R_a, R_b
  # Two survey calls (the same linearisation; must agree) and the closed form
  #   cov = (1-f) K/(K-1) sum u_a u_b / N^2, corr = sum u_a u_b / sqrt(sum u_a^2 sum u_b^2).
  v1 <- vcov(svyratio(~sa + sb, ~n, des, covmat = TRUE))
  v2 <- vcov(svyratio(~sa + sb, ~n + n, des, covmat = TRUE))
  check("svyratio(~sa+sb, ~n) vcov == svyratio(~sa+sb, ~n+n) vcov", v1, v2, tol = 1e-12)
  ua <- docs$sa - coef(sra) * docs$n
  ub <- docs$sb - coef(srb) * docs$n
  c1 <- K / (K - 1)
  cov_ab <- c1 * sum(ua * ub) / N^2 * fpc_fac^2
  var_a <- c1 * sum(ua^2) / N^2 * fpc_fac^2
  var_b <- c1 * sum(ub^2) / N^2 * fpc_fac^2
  check("survey covariance == closed form", v1[1, 2], cov_ab)
  check("survey variances == closed form", diag(v1), c(var_a, var_b))
  corr <- v1[1, 2] / sqrt(v1[1, 1] * v1[2, 2])
  check("corr == sum ua ub / sqrt(sum ua^2 sum ub^2)", corr, sum(ua * ub) / sqrt(sum(ua^2) * sum(ub^2)))
  check("Var(Delta) = V_A + V_B - 2 C_AB (methods.md)", se1^2, var_a + var_b - 2 * cov_ab)
  check("u^D = u_A - u_B", uD, ua - ub, tol = 1e-9)
  out[["correlation.micro"]] <- corr
  out[["correlation.macro"]] <- cor(docs$ra, docs$rb)
  out[["covariance.micro.cov"]] <- v1[1, 2]
  out[["covariance.micro.var_a"]] <- v1[1, 1]
  out[["covariance.micro.var_b"]] <- v1[2, 2]

  # ------------------------------------------------ ties
  out[["ties_fraction"]] <- mean(docs$sa == docs$sb)

  # ------------------------------------------------ exact document-level sign-flip test (K <= 12)
  # T(eps) = sum_d eps_d D_d / N over all 2^K sign vectors, D_d = s_ad - s_bd;
  # p = mean(|T(eps)| >= |T_obs| - tol), tol = 1e-12 * max|D| / N: a tie tolerance so that sign
  # vectors giving |T| equal to |T_obs| in exact arithmetic (eps = +-1, flips of documents with
  # D_d = 0, ...) are counted despite rounding. The golden value does not depend on tol: the script
  # stops if any |T| lies within 1e-6 * max|D| / N of |T_obs| without lying within tol.
  if (K <= 12) {
    D <- docs$sa - docs$sb
    E <- sign_matrix(K)
    T <- drop(E %*% D) / N
    T_obs <- sum(D) / N
    check("row 1 of the sign matrix is the observed statistic", T[1], T_obs, tol = 1e-12)
    tol <- 1e-12 * max(abs(D)) / N
    gap <- abs(abs(T) - abs(T_obs))
    if (any(gap > tol & gap <= 1e-6 * max(abs(D)) / N))
      stop("randomization: near tie that is not an exact tie; change the data", call. = FALSE)
    out[["randomization.p_value"]] <- mean(abs(T) >= abs(T_obs) - tol)
    out[["randomization.exact"]] <- TRUE
    check("randomization p >= 2 / 2^K", out[["randomization.p_value"]] >= 2 / 2^K, 1)
  }
  out
}

# ============================================================================= B. stratified
run_stratified <- function(case) {
  level <- case$level
  Mh <- unlist(case$population_sizes)
  if (!is.null(case$single_stratum)) {  # chunk CSV of the first oracle; one stratum
    ch <- read_data(case, c("character", "numeric"))
    stopifnot(identical(names(ch), c("doc", "y")))
    docs <- data.frame(doc = sort(unique(ch$doc)), stringsAsFactors = FALSE)
    docs$n <- as.numeric(tapply(ch$y, ch$doc, length)[docs$doc])
    docs$s <- as.numeric(tapply(ch$y, ch$doc, sum)[docs$doc])
    docs$q <- as.numeric(tapply(ch$y^2, ch$doc, sum)[docs$doc])
    docs$h <- case$single_stratum
  } else {
    docs <- read_data(case, c("character", "character", "numeric", "numeric", "numeric"))
    stopifnot(identical(names(docs), c("doc", "h", "n", "s", "q")))
  }
  stopifnot(all(docs$h %in% names(Mh)), all(names(Mh) %in% docs$h))
  docs$Mh <- as.numeric(Mh[docs$h])
  docs$r <- docs$s / docs$n
  K <- nrow(docs); H <- length(Mh)
  des <- svydesign(ids = ~doc, strata = ~h, fpc = ~Mh, data = docs)
  df <- degf(des)
  check("degf == K - H", df, K - H)

  sr <- svyratio(~s, ~n, des)
  est <- as.numeric(coef(sr)); se <- as.numeric(SE(sr))
  # methods.md closed form (combined ratio)
  kh <- as.numeric(table(docs$h)[docs$h])
  w <- docs$Mh / kh
  X <- sum(w * docs$n)
  Rc <- sum(w * docs$s) / X
  u <- docs$s - Rc * docs$n
  v <- 0
  for (hh in names(Mh)) {
    i <- docs$h == hh; k <- sum(i)
    v <- v + Mh[[hh]]^2 * (1 - k / Mh[[hh]]) * var(u[i]) / k
  }
  check("combined ratio estimate (methods.md)", est, Rc)
  check("combined ratio se (methods.md)", se, sqrt(v) / X)
  out <- list()
  out[["micro.estimate"]] <- est
  out[["micro.design.se"]] <- se
  out[["micro.design.df"]] <- df
  out[["micro.design.ci"]] <- tci(est, se, df, level)

  sm <- svymean(~r, des)
  mest <- as.numeric(coef(sm)); mse <- as.numeric(SE(sm))
  # stratified mean of the document rates: sum_h W_h rbar_h, v = sum_h W_h^2 (1-f_h) s_h^2 / k_h
  W <- Mh / sum(Mh)
  rb <- tapply(docs$r, docs$h, mean)[names(Mh)]
  s2 <- tapply(docs$r, docs$h, var)[names(Mh)]
  kk <- as.numeric(table(docs$h)[names(Mh)])
  check("stratified macro estimate", mest, sum(W * rb))
  check("stratified macro se", mse, sqrt(sum(W^2 * (1 - kk / Mh) * s2 / kk)))
  out[["macro.estimate"]] <- mest
  out[["macro.design.se"]] <- mse
  out[["macro.design.df"]] <- df
  out[["macro.design.ci"]] <- tci(mest, mse, df, level)

  if (H == 1) {  # one stratum == simple random sample of documents with fpc
    M <- Mh[[1]]; docs$M <- M
    s1 <- svyratio(~s, ~n, svydesign(ids = ~doc, fpc = ~M, data = docs))
    check("one stratum == simple design with fpc (micro)", c(est, se), c(coef(s1), SE(s1)))
    check("one stratum macro == sd(r)/sqrt(K)*sqrt(1-K/M)", mse, sd(docs$r) / sqrt(K) * sqrt(1 - K / M))
    if (!is.null(case$same_as)) {
      if (is.null(golden1)) stop("golden.json missing: run oracle.R first", call. = FALSE)
      g <- golden1[[case$same_as]]
      check("one stratum == golden.json micro.estimate", est, g[["micro.estimate"]], tol = 1e-14)
      check("one stratum == golden.json micro.cr1.se (fpc)", se, g[["micro.cr1.se"]], tol = 1e-14)
      check("one stratum == golden.json micro.cr1.ci", out[["micro.design.ci"]], g[["micro.cr1.ci"]], tol = 1e-14)
      check("one stratum == golden.json macro.t.se", mse, g[["macro.t.se"]], tol = 1e-14)
      check("one stratum == golden.json macro.t.ci", out[["macro.design.ci"]], g[["macro.t.ci"]], tol = 1e-14)
    }
  }
  out
}

# ============================================================================= C. two-stage
run_two_stage <- function(case) {
  ch <- read_data(case, c("character", "character", "numeric", "numeric"))
  stopifnot(identical(names(ch), c("doc", "chunk", "y", "N_d")))
  level <- case$level
  M <- case$population_size
  ch$M <- M
  des <- svydesign(ids = ~doc + chunk, fpc = ~M + N_d, data = ch, nest = TRUE)
  sm <- svymean(~y, des)
  est <- as.numeric(coef(sm)); se <- as.numeric(SE(sm)); df <- degf(des)

  docs <- data.frame(doc = sort(unique(ch$doc)), stringsAsFactors = FALSE)
  docs$n <- as.numeric(tapply(ch$y, ch$doc, length)[docs$doc])
  docs$s <- as.numeric(tapply(ch$y, ch$doc, sum)[docs$doc])
  docs$q <- as.numeric(tapply(ch$y^2, ch$doc, sum)[docs$doc])
  docs$Nd <- as.numeric(tapply(ch$N_d, ch$doc, function(x) { stopifnot(length(unique(x)) == 1); x[1] })[docs$doc])
  K <- nrow(docs)
  check("degf == K - 1", df, K - 1)
  ch_n <- as.numeric(table(ch$doc)[ch$doc])
  check("weights == (M/K)(N_d/n_d)", weights(des), (M / K) * (ch$N_d / ch_n), tol = 1e-12)

  # methods.md closed form
  f1 <- K / M
  f2 <- docs$n / docs$Nd
  ybar <- docs$s / docs$n
  R2 <- sum(docs$Nd * ybar) / sum(docs$Nd)
  z <- docs$Nd * (ybar - R2)
  Nbar <- sum(docs$Nd) / K
  s2 <- ifelse(docs$n > 1, (docs$q - docs$s^2 / docs$n) / (docs$n - 1), 0)
  v_R2 <- ((1 - f1) * var(z) / K + (f1 / K^2) * sum(docs$Nd^2 * (1 - f2) * s2 / docs$n)) / Nbar^2
  check("two-stage estimate R2 (methods.md)", est, R2)
  rd <- reldiff(se, sqrt(v_R2))
  cat(sprintf("  two-stage closed form v(R2) vs survey: relative difference of se %.3g\n", rd))
  if (rd > 1e-10) note("%s: methods.md v(R2) disagrees with survey: se %.17g (survey) vs %.17g (methods.md), rel diff %.3g",
                       case$data, se, sqrt(v_R2), rd)

  if (all(docs$n == docs$Nd)) {  # every chunk taken == one-stage cluster design with fpc
    s1 <- svymean(~y, svydesign(ids = ~doc, fpc = ~M, data = ch))
    check("all chunks taken: two-stage == one-stage with fpc", c(est, se), c(coef(s1), SE(s1)))
    docs$M <- M
    s1r <- svyratio(~s, ~n, svydesign(ids = ~doc, fpc = ~M, data = docs))
    check("all chunks taken: == svyratio(~s, ~n) with fpc", c(est, se), c(coef(s1r), SE(s1r)))
  }
  out <- list()
  out[["micro.estimate"]] <- est
  out[["micro.design.se"]] <- se
  out[["micro.design.df"]] <- df
  out[["micro.design.ci"]] <- tci(est, se, df, level)
  out
}

# ============================================================================= D. bounded intervals
# What survey 4.1.1's svyciprop does (read from print(survey::svyciprop)):
# * method = "beta" (Korn-Graubard): m <- svymean(~y, design); n.eff <- p(1-p)/vcov(m);
#   n.eff <- n.eff * (qt(alpha/2, nrow(design) - 1) / qt(alpha/2, degf(design)))^2;
#   CI = [qbeta(alpha/2, n.eff p, n.eff (1-p) + 1), qbeta(1-alpha/2, n.eff p + 1, n.eff (1-p))].
#   nrow(design) is the number of rows of the design's data: N chunks for this chunk-level design
#   (it would be K for a document-level design!). The df is ALWAYS degf(design) (= K - #strata = K-1
#   here): svyciprop's df argument is ignored by "beta". vcov(m) includes the fpc factor (1 - K/M).
# * method = "logit": svyglm(y ~ 1, design, family = quasibinomial), then
#   confint(fit, method = "Wald", ddf = df) with df = degf(design) by default: a t quantile with K-1
#   df via tlevel = 1 - 2 pnorm(qt(alpha/2, ddf)) and confint.default, i.e.
#   expit(b +- qt(1-alpha/2, K-1) se_b); se_b = sqrt(V)/(p(1-p)) (sandwich of the intercept-only
#   logistic fit). b comes from IRLS, so it equals logit(p) only to glm's convergence tolerance;
#   the golden value is the closed form expit(logit(p) +- qt(1-alpha/2, df) sqrt(V)/(p(1-p))), which
#   the script checks against svyciprop(method = "logit") and method = "xlogit" (1e-7 relative).
# * Wilson (not in survey 4.1.1): n = p(1-p)/V (no Korn-Graubard df adjustment), t = qt(1-alpha/2, df),
#   df = degf(design); CI = (p + t^2/(2n)) / (1 + t^2/n) -+ t/(1 + t^2/n) sqrt(p(1-p)/n + t^2/(4n^2)),
#   i.e. the Wilson score interval with z replaced by t and the sample size by n_eff.
run_ciprop <- function(case) {
  ch <- read_data(case, c("character", "numeric"))
  stopifnot(identical(names(ch), c("doc", "y")), all(ch$y %in% c(0, 1)))
  level <- case$level; a <- 1 - level
  M <- case$population_size
  has_M <- !is.null(M)
  if (has_M) ch$M <- M
  des <- suppressWarnings(if (has_M) svydesign(ids = ~doc, data = ch, fpc = ~M)
                          else svydesign(ids = ~doc, data = ch))
  K <- length(unique(ch$doc)); N <- nrow(ch)
  m <- svymean(~y, des)
  p <- as.numeric(coef(m)); V <- as.numeric(vcov(m)); df <- degf(des)
  check("degf == K - 1", df, K - 1)
  check("nrow(design) == N", nrow(des), N)
  # V == CR1 variance (times 1-f)
  u <- tapply(ch$y, ch$doc, sum) - p * tapply(ch$y, ch$doc, length)
  check("V == (1-f) K/(K-1) sum u^2 / N^2", V, (if (has_M) 1 - K / M else 1) * K / (K - 1) * sum(u^2) / N^2)

  kg <- as.numeric(attr(svyciprop(~y, des, method = "beta", level = level), "ci"))
  neff <- p * (1 - p) / V * (qt(a / 2, N - 1) / qt(a / 2, df))^2
  kg_cf <- c(qbeta(a / 2, neff * p, neff * (1 - p) + 1), qbeta(1 - a / 2, neff * p + 1, neff * (1 - p)))
  check("Korn-Graubard: svyciprop beta == methods.md formula", kg, kg_cf, tol = 1e-12)

  t <- qt(1 - a / 2, df)
  lg_cf <- plogis(qlogis(p) + c(-1, 1) * t * sqrt(V) / (p * (1 - p)))
  lg <- as.numeric(attr(svyciprop(~y, des, method = "logit", level = level), "ci"))
  xl <- as.numeric(attr(svyciprop(~y, des, method = "xlogit", level = level), "ci"))
  if (all(is.finite(lg))) {
    check("logit: svyciprop logit (IRLS) ~ closed form", lg, lg_cf, tol = 1e-7)
  } else {
    # confint.svyglm turns the t quantile into a normal level, tlevel = 1 - 2 pnorm(qt(alpha/2, df)),
    # which rounds to 1 for df = 1 at 95% (pnorm(-12.7) ~ 3e-37): survey returns [0, NaN] there.
    note("%s: svyciprop(method = \"logit\") gives [%s] (df = %g, level %g): survey's tlevel rounds to 1; golden uses the closed form, checked against xlogit",
         case$data, paste(format(lg), collapse = ", "), df, level)
  }
  check("logit: svyciprop xlogit == closed form", xl, lg_cf, tol = 1e-12)
  cat(sprintf("  svyciprop logit vs closed form: rel diff %.3g; xlogit %.3g\n",
              reldiff(lg, lg_cf), reldiff(xl, lg_cf)))

  n <- p * (1 - p) / V
  centre <- (p + t^2 / (2 * n)) / (1 + t^2 / n)
  half <- t / (1 + t^2 / n) * sqrt(p * (1 - p) / n + t^2 / (4 * n^2))
  wi <- c(centre - half, centre + half)
  stopifnot(all(c(kg, lg_cf, wi) >= 0 & c(kg, lg_cf, wi) <= 1))

  out <- list()
  out[["micro.estimate"]] <- p
  out[["micro.korn_graubard.ci"]] <- kg
  out[["micro.logit.ci"]] <- lg_cf
  out[["micro.wilson.ci"]] <- wi
  out
}

# ============================================================================= E. wild bootstrap
# Literal, dense: for each mu0 and each of the 2^K Rademacher sign vectors v (K <= 12),
#   y*_i = mu0 + v_d(i) (y_i - mu0), refit lm(y* ~ 1) (one multi-response lm for all 2^K columns),
#   t* = (coef* - mu0) / se*_CR1, se*_CR1 = sqrt(K/(K-1) sum_d (sum_{i in d} e*_i)^2) / N
#   (the CR1 sandwich of lm(y ~ 1): (X'X)^-1 = 1/N; checked against clubSandwich on some columns);
#   t = (R - mu0) / se_CR1 of the data (unrestricted residuals);
#   p(mu0) = mean(|t*| >= |t| (1 - 1e-10)). The relative tolerance counts the draws v = +-1, whose
#   |t*| equals |t| in exact arithmetic but not after rounding; the script stops if any draw lies
#   within 1e-6 of |t| (relative) without lying within 1e-10, so the golden p does not depend on it.
# Grid: mu0 = signif(R + c * se_CR1, 6) for the c values below (never mu0 = R, where t = 0).
WILD_C <- c(-4, -3, -2.3, -1.6, -0.9, 0.35, 1.2, 2.1, 3.4)
run_wild <- function(case) {
  ch <- read_data(case, c("character", "numeric"))
  stopifnot(identical(names(ch), c("doc", "y")))
  lev <- sort(unique(ch$doc))
  K <- length(lev); N <- nrow(ch)
  stopifnot(K <= 12)
  di <- match(ch$doc, lev)
  n <- as.numeric(tabulate(di, K)); s <- as.numeric(rowsum(ch$y, di)[, 1])
  fit0 <- lm(y ~ 1, data = ch)
  R <- as.numeric(coef(fit0))
  se0 <- sqrt(vcovCR(fit0, cluster = ch$doc, type = "CR1")[1, 1])
  check("CR1 of the data == K/(K-1) formula", se0,
        sqrt(K / (K - 1) * sum(rowsum(residuals(fit0), di)^2)) / N)
  E <- sign_matrix(K)              # 2^K x K
  B <- nrow(E)
  grid <- signif(R + WILD_C * se0, 6)
  pv <- numeric(length(grid))
  for (g in seq_along(grid)) {
    mu0 <- grid[g]
    Ystar <- mu0 + t(E)[di, , drop = FALSE] * (ch$y - mu0)   # N x 2^K
    fit <- lm(Ystar ~ 1)
    b <- coef(fit)[1, ]
    e <- residuals(fit)
    se_star <- sqrt(K / (K - 1) * colSums(rowsum(e, di)^2)) / N
    stopifnot(all(se_star > 0))
    tstar <- (b - mu0) / se_star
    t_obs <- (R - mu0) / se0
    # clubSandwich on a few columns (v = +1, v = -1 and three others)
    for (j in unique(c(1, B, 2, B %/% 3, B - 5))) {
      yj <- Ystar[, j]
      fj <- lm(yj ~ 1)
      sej <- sqrt(vcovCR(fj, cluster = ch$doc, type = "CR1")[1, 1])
      check("wild: dense t* == lm + clubSandwich CR1", tstar[j], (coef(fj) - mu0) / sej, tol = 1e-8)
    }
    # methods.md O(K) form, no refit
    ut <- s - mu0 * n
    A <- drop(E %*% ut)
    ustar <- E * rep(ut, each = B) - outer(A, n) / N
    t_ok <- (A / N) / (sqrt(K / (K - 1) * rowSums(ustar^2)) / N)
    check("wild: dense lm refits == methods.md O(K) WCR formula", tstar, t_ok, tol = 1e-8)
    check("wild: v = +1 gives t", tstar[1], t_obs, tol = 1e-10)
    gap <- abs(abs(tstar) - abs(t_obs)) / abs(t_obs)
    if (any(gap > 1e-10 & gap <= 1e-6))
      stop(sprintf("wild: near tie at mu0 = %g; change the grid", mu0), call. = FALSE)
    pv[g] <- mean(abs(tstar) >= abs(t_obs) * (1 - 1e-10))
  }
  cat(sprintf("  wild p: %s\n", paste(format(pv, digits = 4), collapse = " ")))
  list("wild.grid" = grid, "wild.p_values" = pv)
}

# ============================================================================= main
runners <- list(compare = run_compare, stratified = run_stratified, two_stage = run_two_stage,
                ciprop = run_ciprop, wild = run_wild)
golden <- list()
for (nm in sort(names(cases))) {
  case <- cases[[nm]]
  cat(sprintf("%-26s %s\n", nm, case$kind))
  res <- runners[[case$kind]](case)
  golden[[nm]] <- lapply(res, num_json)
}
golden[["_versions"]] <- list(
  R = R.version.string,
  clubSandwich = as.character(packageVersion("clubSandwich")),
  survey = as.character(packageVersion("survey")),
  jsonlite = as.character(packageVersion("jsonlite"))
)
if (length(notes)) golden[["_notes"]] <- as.list(notes)
writeLines(toJSON(golden, auto_unbox = TRUE, json_verbatim = TRUE, pretty = TRUE),
           file.path(dir, "golden2.json"))
cat("wrote", file.path(dir, "golden2.json"), "\n")
