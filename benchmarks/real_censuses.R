# Real clustered data sets shipped with R packages, exported as censuses for the coverage panel
# (benchmarks/coverage_panel.py). Each file has one row per measurement: doc (the cluster) and score
# columns. Run: Rscript benchmarks/real_censuses.R  (needs r-cran-survey, r-cran-mlmrev, r-cran-lme4).
suppressMessages({library(survey); library(mlmRev); library(lme4)})
out <- file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE))), "censuses")
dir.create(out, showWarnings = FALSE)
save <- function(df, name) {
  con <- gzfile(file.path(out, paste0(name, ".csv.gz")), "w")
  write.csv(df, con, row.names = FALSE)
  close(con)
  cat(name, nrow(df), "rows,", length(unique(df$doc)), "clusters\n")
}
data(api)   # California schools (apipop: every school; clusters = school districts)
save(data.frame(doc = apipop$dnum,
                sch_wide = as.integer(apipop$sch.wide == "Yes"),
                awards = as.integer(apipop$awards == "Yes"),
                api00 = apipop$api00 / 1000,
                meals = ifelse(is.na(apipop$meals), 0, apipop$meals) / 100), "apipop")
data(Chem97)  # A-level chemistry scores (clusters = schools)
save(data.frame(doc = Chem97$school, score = Chem97$score / 10,
                pass = as.integer(Chem97$score >= 6)), "chem97")
data(InstEval)  # lecture evaluations (clusters = lecturers)
save(data.frame(doc = as.integer(InstEval$d), rating = (as.integer(InstEval$y) - 1) / 4,
                top = as.integer(InstEval$y == 5)), "insteval")
data(Exam)  # normalised exam scores (clusters = schools; an unbounded score)
save(data.frame(doc = as.integer(Exam$school), normexam = Exam$normexam), "exam")
