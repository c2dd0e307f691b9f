from .entry import main_exit

main_exit()
