module github.com/miniapiserver/miniapiserver/client

go 1.23
