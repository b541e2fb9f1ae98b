module jobsweeper.local/test-node

go 1.24
