module etcdfn.io/test/cron-check

go 1.26

require github.com/robfig/cron/v3 v3.0.1
