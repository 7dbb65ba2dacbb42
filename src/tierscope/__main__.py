from tierscope.cli import main

main()
